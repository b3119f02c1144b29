package daemon

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/perfagent/subagent/agentx"
	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/mib/schema"
	"github.com/perfagent/subagent/settable"
	"github.com/perfagent/subagent/spmi"
)

// hotsetCell is the OID of column col of hotsetDefTable's row name.
func hotsetCell(base asn1tree.OID, col uint32, name string) asn1tree.OID {
	return tableCell(base, schema.HotsetDefTable, col, name)
}

// tableCell is column col of row name of a writable table under base.
func tableCell(base asn1tree.OID, t *schema.WritableTable, col uint32, name string) asn1tree.OID {
	o := base.Append(spmi.ASNWritable, t.Arc, 1, col, uint32(len(name)))
	for i := 0; i < len(name); i++ {
		o = append(o, uint32(name[i]))
	}
	return o
}

// set runs vbs as the master does (TestSet, then CommitSet) and returns
// the refusal, if any.
func set(t *testing.T, w *settable.Writer, vbs []agentx.VarBind) *agentx.SetError {
	t.Helper()
	ch, serr := w.TestSet(vbs)
	if serr != nil {
		return serr
	}
	defer ch.Cleanup()
	if err := ch.Commit(); err != nil {
		t.Fatalf("CommitSet: %v", err)
	}
	return nil
}

// volatileHotset is a createAndGo of a complete volatile hotset row (no
// state file written, so that a thousand of them take little time).
func volatileHotset(base asn1tree.OID, name string) []agentx.VarBind {
	vbs := hotsetSet(base, name)
	vbs[len(vbs)-2].Value = asn1tree.Int(settable.Volatile)
	return vbs
}

func destroyHotset(base asn1tree.OID, name string) []agentx.VarBind {
	status := uint32(len(schema.HotsetDefTable.Columns)) + 3
	return []agentx.VarBind{{OID: hotsetCell(base, status, name), Value: asn1tree.Int(settable.Destroy)}}
}

// activeRows and engineDefs are hotsetDefTable's active rows and the
// hotsets the engine evaluates, by name.
func activeRows(d *Daemon) []string {
	var out []string
	for _, r := range (hotsetRows{d}).Rows() {
		if r.Status == settable.Active {
			out = append(out, r.Name)
		}
	}
	slices.Sort(out)
	return out
}

func engineDefs(d *Daemon) []string {
	var out []string
	for _, v := range d.hot.eng.Views() {
		out = append(out, v.Def.Name)
	}
	slices.Sort(out)
	return out
}

// Reloads (SIGHUP's Daemon.Reload) run while 1,000 SETs create and
// destroy hotset rows: after each SET and at the end, every row
// hotsetDefTable shows active is a hotset the engine evaluates, and the
// engine evaluates no other (after each SET, leaving out the configured
// hotset the reloads add and remove meanwhile).
// Before one owner applied the definitions, a reload that had built its
// list before a SET installed it after, and the SET's row stayed active
// in the table with no hotset behind it. Run it with -race.
func TestReloadDuringSets(t *testing.T) {
	c := fixtureConfig(t)
	d, err := New(c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	w := d.WritableTables()
	// The reloads alternate between two files, one with a hotset more.
	c2 := *c
	c2.Hotsets = []config.HotsetConf{{Name: "conf", Stat: "Disk/*/busy", FeedType: "always", ExcpType: "none"}}
	stop, stopped := make(chan struct{}), make(chan int)
	go func() {
		n := 0
		defer func() { stopped <- n }()
		for ; n < 100000; n++ {
			select {
			case <-stop:
				return
			default:
			}
			cfg := c
			if n%2 == 1 {
				cfg = &c2
			}
			if err := d.Reload(cfg); err != nil {
				t.Errorf("reload %d: %v", n, err)
				return
			}
		}
	}()
	rng := rand.New(rand.NewPCG(37, 1))
	const sets = 1000
	made, destroyed, wrong := 0, 0, 0
	notConf := func(names []string) []string {
		return slices.DeleteFunc(names, func(n string) bool { return n == "conf" })
	}
	for i := 0; i < sets; i++ {
		name := fmt.Sprintf("row%d", rng.IntN(20))
		vbs := volatileHotset(c.Base, name)
		if slices.Contains(activeRows(d), name) {
			vbs = destroyHotset(c.Base, name)
		}
		switch serr := set(t, w, vbs); {
		case serr == nil && len(vbs) == 1:
			destroyed++
		case serr == nil:
			made++
		default:
			t.Fatalf("SET %d of row %s: %v", i, name, serr)
		}
		// Twice: a reload that installs an older list does so soon after.
		for range 2 {
			if rows, defs := notConf(activeRows(d)), notConf(engineDefs(d)); !slices.Equal(rows, defs) {
				if wrong++; wrong == 1 {
					t.Errorf("after SET %d of row %s: hotsetDefTable's active rows %v, but the engine evaluates %v", i, name, rows, defs)
				}
				break
			}
		}
	}
	if wrong > 0 {
		t.Errorf("the table and the engine disagreed after %d of %d SETs", wrong, sets)
	}
	close(stop)
	reloads := <-stopped
	t.Logf("%d SETs (%d rows created, %d destroyed) during %d reloads", sets, made, destroyed, reloads)
	if reloads < 2 {
		t.Fatalf("only %d reloads ran during the SETs", reloads)
	}
	if rows, defs := activeRows(d), engineDefs(d); !slices.Equal(rows, defs) {
		t.Errorf("hotsetDefTable's active rows %v, but the engine evaluates %v", rows, defs)
	}
}

// hotset.max_snmp_rows changed by a reload holds at once: a raised limit
// lets more rows be created, a lowered one keeps the rows there are and
// refuses new ones (resourceUnavailable) until fewer remain.
func TestReloadMaxSNMPRows(t *testing.T) {
	c := fixtureConfig(t)
	c.Hotset.MaxSNMPRows = 2
	d, err := New(c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	w := d.WritableTables()
	create := func(name string) *agentx.SetError { return set(t, w, volatileHotset(c.Base, name)) }
	for _, name := range []string{"a", "b"} {
		if serr := create(name); serr != nil {
			t.Fatalf("create %s: %v", name, serr)
		}
	}
	if serr := create("c"); serr == nil || serr.Code != agentx.ResourceUnavailable {
		t.Fatalf("a third row with max_snmp_rows 2: %v, want resourceUnavailable", serr)
	}
	raised := *c
	raised.Hotset.MaxSNMPRows = 4
	if err := d.Reload(&raised); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"c", "d"} {
		if serr := create(name); serr != nil {
			t.Fatalf("create %s after a reload raised max_snmp_rows to 4: %v", name, serr)
		}
	}
	if serr := create("e"); serr == nil || serr.Code != agentx.ResourceUnavailable {
		t.Fatalf("a fifth row with max_snmp_rows 4: %v, want resourceUnavailable", serr)
	}
	lowered := *c
	lowered.Hotset.MaxSNMPRows = 2
	if err := d.Reload(&lowered); err != nil {
		t.Fatal(err)
	}
	if rows := activeRows(d); len(rows) != 4 {
		t.Fatalf("after max_snmp_rows was lowered to 2, the rows are %v, want the 4 kept", rows)
	}
	if serr := set(t, w, destroyHotset(c.Base, "a")); serr != nil {
		t.Fatalf("destroy a: %v", serr)
	}
	if serr := create("e"); serr == nil || serr.Code != agentx.ResourceUnavailable {
		t.Fatalf("a row with 3 held and max_snmp_rows 2: %v, want resourceUnavailable", serr)
	}
	if rows, defs := activeRows(d), engineDefs(d); !slices.Equal(rows, []string{"b", "c", "d"}) || !slices.Equal(defs, rows) {
		t.Fatalf("rows %v, engine %v, want b c d in both", rows, defs)
	}
}
