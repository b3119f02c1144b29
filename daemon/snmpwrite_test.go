package daemon

import (
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/agentx"
	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/mib/schema"
	"github.com/perfagent/subagent/settable"
	"github.com/perfagent/subagent/spmi"
)

// hotsetSet is a createAndGo of a complete nonVolatile hotset row.
func hotsetSet(base asn1tree.OID, name string) []agentx.VarBind {
	entry := base.Append(spmi.ASNWritable, schema.HotsetDefTable.Arc, 1)
	cell := func(col uint32) asn1tree.OID {
		o := entry.Append(col, uint32(len(name)))
		for i := 0; i < len(name); i++ {
			o = append(o, uint32(name[i]))
		}
		return o
	}
	vals := []asn1tree.Value{asn1tree.Str("Disk/*/busy"), asn1tree.Int(3), asn1tree.Int(80), asn1tree.Int(300),
		asn1tree.Int(2), asn1tree.Int(3), asn1tree.Int(0), asn1tree.Int(41)}
	var vbs []agentx.VarBind
	for i, v := range vals {
		vbs = append(vbs, agentx.VarBind{OID: cell(uint32(i) + 2), Value: v})
	}
	n := uint32(len(schema.HotsetDefTable.Columns))
	return append(vbs, agentx.VarBind{OID: cell(n + 2), Value: asn1tree.Int(settable.NonVolatile)},
		agentx.VarBind{OID: cell(n + 3), Value: asn1tree.Int(settable.CreateAndGo)})
}

// A CommitSet that creates a nonVolatile hotset row writes the numbering
// file, synced, before it answers: the master (net-snmp's agentXTimeout,
// 1 s by default) resends a CommitSet not answered in time, so each
// commit, fsync included, must take well under a second. The figures are
// logged (go test -v); the state directory is the test's, on the disk
// of the machine running it.
func TestCommitSetNonVolatileTime(t *testing.T) {
	c := fixtureConfig(t)
	d, err := New(c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	const rows = 20
	var took []time.Duration
	for i := 0; i < rows; i++ {
		name := "commit" + string(rune('a'+i))
		ch, serr := d.WritableTables().TestSet(hotsetSet(c.Base, name))
		if serr != nil {
			t.Fatalf("TestSet %s: %v", name, serr)
		}
		start := time.Now()
		if err := ch.Commit(); err != nil {
			t.Fatalf("Commit %s: %v", name, err)
		}
		took = append(took, time.Since(start))
		ch.Cleanup()
	}
	// What the next start reads: every row, committed before it answered.
	num, err := spmi.LoadNumbering(d.num.File())
	if err != nil {
		t.Fatal(err)
	}
	if names, _ := num.Records(HotsetRecords); len(names) != rows {
		t.Errorf("the numbering file %s holds %d hotset rows, want %d: %v", d.num.File(), len(names), rows, names)
	}
	slices.Sort(took)
	t.Logf("CommitSet of a nonVolatile hotset row (numbering file synced), %d rows: median %v, max %v",
		rows, took[rows/2], took[rows-1])
	if took[rows-1] >= time.Second/2 {
		t.Errorf("a commit took %v: the master resends a CommitSet after agentXTimeout (1 s)", took[rows-1])
	}
}

// A configured hotset hides a row of the same name created over SNMP
// (the module says so): after a reload that configures the name, the
// table holds one row, the configured one, readOnly, and the tables are
// still served (a duplicate OID would empty the whole view).
func TestConfiguredHotsetHidesSNMPRow(t *testing.T) {
	c := fixtureConfig(t)
	d, err := New(c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	w := d.WritableTables()
	for _, name := range []string{"shared", "other"} {
		ch, serr := w.TestSet(hotsetSet(c.Base, name))
		if serr != nil {
			t.Fatalf("TestSet %s: %v", name, serr)
		}
		if err := ch.Commit(); err != nil {
			t.Fatal(err)
		}
		ch.Cleanup()
	}
	c2 := *c
	c2.Hotsets = []config.HotsetConf{{Name: "shared", Stat: "Disk/*/busy", FeedType: "always", ExcpType: "none"}}
	if err := d.Reload(&c2); err != nil {
		t.Fatal(err)
	}
	// The first View after the reload is built now.
	storage := func(name string) (int64, bool) {
		cols := uint32(len(schema.HotsetDefTable.Columns))
		o := c.Base.Append(spmi.ASNWritable, schema.HotsetDefTable.Arc, 1, cols+2, uint32(len(name)))
		for i := 0; i < len(name); i++ {
			o = append(o, uint32(name[i]))
		}
		v, ok := w.View().Get(o)
		return v.Signed(), ok
	}
	if st, ok := storage("shared"); !ok || st != settable.ReadOnly {
		t.Errorf("hotsetDefStorageType.shared: %d (served %v), want readOnly(5): the configured hotset", st, ok)
	}
	if st, ok := storage("other"); !ok || st != settable.NonVolatile {
		t.Errorf("hotsetDefStorageType.other: %d (served %v), want nonVolatile(3)", st, ok)
	}
	if n := len(hotsetRows{d}.Rows()); n != 2 {
		t.Errorf("hotsetDefTable has %d rows, want 2 (shared, configured, and other)", n)
	}
}

// An rTimeLANHostTable index is the host as the table shows it: an
// address written otherwise ("[::1]", " ::1") would create or name the
// row of another index, so it is refused with noCreation, naming the form.
func TestHostIndexCanonical(t *testing.T) {
	c := fixtureConfig(t)
	d, err := New(c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	entry := c.Base.Append(spmi.ASNWritable, schema.RTimeLANHostTable.Arc, 1)
	status := uint32(len(schema.RTimeLANHostTable.Columns)) + 3
	for _, name := range []string{"[::1]", " ::1", "0:0::1"} {
		o := entry.Append(status, uint32(len(name)))
		for i := 0; i < len(name); i++ {
			o = append(o, uint32(name[i]))
		}
		_, serr := d.WritableTables().TestSet([]agentx.VarBind{{OID: o, Value: asn1tree.Int(settable.CreateAndGo)}})
		if serr == nil || serr.Code != agentx.NoCreation || !strings.Contains(serr.Error(), `"::1"`) {
			t.Errorf("createAndGo of host %q: %v, want noCreation naming \"::1\"", name, serr)
		}
	}
	o := entry.Append(status, 3, ':', ':', '1')
	if _, serr := d.WritableTables().TestSet([]agentx.VarBind{{OID: o, Value: asn1tree.Int(settable.CreateAndGo)}}); serr == nil || serr.Code == agentx.NoCreation {
		t.Errorf("createAndGo of host \"::1\" with RTime/LAN off: %v, want the index taken (and RTime/LAN's refusal)", serr)
	}
}
