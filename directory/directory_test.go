package directory

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

// disks is a provider of Dsk/<name>/busy for the disks it is given, and of
// Extra/level while extra is set.
type disks struct {
	mu    sync.Mutex
	names []string
	extra bool
}

var (
	dskCx   = spmi.CxDesc{Name: "Dsk", Descr: "Disks", ASN: 4, Inst: ddswire.SiCfgInst}
	dskTpl  = spmi.CxDesc{Descr: "A disk"}
	busy    = []spmiwire.StatDesc{{Name: "busy", Descr: "Time busy", ASN: 3, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 2, Units: "percent"}}
	extraCx = spmi.CxDesc{Name: "Extra", Descr: "Appears later", ASN: 7}
	level   = []spmiwire.StatDesc{{Name: "level", Descr: "A level", ASN: 1, Max: 10, Val: ddswire.SiCounter}}
)

func (d *disks) Name() string { return "Dsk" }
func (d *disks) Collect(b *spmi.Builder) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	top, err := b.Context(nil, &dskCx)
	if err != nil {
		return err
	}
	for i, n := range d.names {
		row, err := b.Instance(top, &dskTpl, n, n+" disk", uint32(i+1))
		if err != nil {
			return err
		}
		if err := b.Stats(row, busy, []spmiwire.Value{spmiwire.Float(1)}); err != nil {
			return err
		}
	}
	return nil
}

type extra struct{ d *disks }

func (e extra) Name() string { return "Extra" }
func (e extra) Collect(b *spmi.Builder) error {
	e.d.mu.Lock()
	on := e.d.extra
	e.d.mu.Unlock()
	if !on {
		return nil
	}
	cx, err := b.Context(nil, &extraCx)
	if err != nil {
		return err
	}
	return b.Stats(cx, level, []spmiwire.Value{spmiwire.Uint(1)})
}

// rows reads the directory's rows of table (stat or context) from the
// snapshot: path to the row's statistics by name.
func rows(t *testing.T, s *spmi.Snapshot, table string) map[string]map[string]string {
	t.Helper()
	n, err := s.Lookup(Name + "/" + table + "/")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for _, r := range n.Children {
		var paths []string
		r.EachChild(func(c *spmi.Node) bool { paths = append(paths, c.Path); return true })
		sample, err := s.Read(paths)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, it := range sample.Items {
			if it.Err != nil {
				t.Fatalf("%s: %v", it.Path, it.Err)
			}
			m[it.Path[strings.LastIndexByte(it.Path, '/')+1:]] = it.Value.String()
		}
		out[m["path"]] = m
	}
	return out
}

func TestDirectoryFoldsAndCountsGenerations(t *testing.T) {
	base := asn1tree.MustParse("1.3.6.1.4.1.32473.1")
	h := spmi.NewHierarchy(spmi.Config{Base: base})
	d := &disks{names: []string{"sda", "sdb"}}
	h.Add(d)
	h.Add(extra{d})
	var changes []Change
	dir := New(h.Current, func(c Change) { changes = append(changes, c) })
	h.Add(dir.Provider())
	h.Refresh()
	s := h.Refresh()
	if g := dir.Generation(); g != 1 || len(changes) != 0 {
		t.Fatalf("generation %d, changes %v after the first tree; want 1 and none", g, changes)
	}
	if len(s.Failures) > 0 {
		t.Fatalf("failures: %v", s.Failures)
	}
	st := rows(t, s, "stat")
	r := st["Dsk/*/busy"]
	if r == nil || len(st) != 1 {
		t.Fatalf("statistic rows %v, want Dsk/*/busy only", st)
	}
	want := map[string]string{"descr": "Time busy", "type": "quantity float", "syntax": "ScaledGauge2", "units": "percent",
		"scale": "2", "scalar": base.String() + ".4.*.3.0", "column": base.String() + "." + strconv.Itoa(spmi.TablesArc) + ".1.4.1.13"}
	for k, v := range want {
		if r[k] != v {
			t.Errorf("Dsk/*/busy %s = %q, want %q", k, r[k], v)
		}
	}
	cx := rows(t, s, "context")
	if c := cx["Dsk/"]; c == nil || c["instances"] != "2" || c["instantiable"] != "1" || c["descr"] != "Disks" {
		t.Errorf("context row Dsk/: %v, want 2 instances, instantiable, described", c)
	}
	if c := cx["Dsk/*/"]; c == nil || c["descr"] != "A disk" || c["instantiable"] != "0" {
		t.Errorf("context row Dsk/*/: %v, want the template's description, not instantiable", c)
	}

	// A third disk: an instance, no new generation; the count follows.
	d.mu.Lock()
	d.names = append(d.names, "sdc")
	d.mu.Unlock()
	h.Refresh()
	s = h.Refresh()
	if c := rows(t, s, "context")["Dsk/"]; c["instances"] != "3" || dir.Generation() != 1 || len(changes) != 0 {
		t.Errorf("after a third disk: %v, generation %d, changes %v; want 3 instances, generation 1, no change", c, dir.Generation(), changes)
	}

	// A context appears, then vanishes: a generation each.
	for i, on := range []bool{true, false} {
		d.mu.Lock()
		d.extra = on
		d.mu.Unlock()
		h.Refresh()
		s = h.Refresh()
		if g := dir.Generation(); g != uint32(2+i) || len(changes) != i+1 {
			t.Fatalf("generation %d, changes %v after Extra on=%v; want %d", g, changes, on, 2+i)
		}
		c := changes[i]
		got := c.Added
		if !on {
			got = c.Removed
		}
		if !slices.Equal(got, []string{"Extra/"}) || len(c.Added)+len(c.Removed) != 1 {
			t.Errorf("change %+v, want Extra/ %s only", c, map[bool]string{true: "added", false: "removed"}[on])
		}
		if _, ok := rows(t, s, "stat")["Extra/level"]; ok != on {
			t.Errorf("Extra/level listed: %v, want %v", ok, on)
		}
	}
}

// many is a supplier-like provider: one context with a block of n
// statistics (no node each).
type many struct{ n int }

func (m many) Name() string { return "Many" }
func (m many) Collect(b *spmi.Builder) error {
	cx, err := b.Context(nil, &spmi.CxDesc{Name: "Many", Descr: "Many statistics", ASN: 9})
	if err != nil {
		return err
	}
	ds := make([]spmiwire.StatDesc, m.n)
	for i := range ds {
		ds[i] = spmiwire.StatDesc{Name: "v" + strconv.Itoa(i+1), Descr: "Value", ASN: uint32(i + 1), Max: 10, Val: ddswire.SiCounter}
	}
	blk, err := spmi.NewBlock(ds)
	if err != nil {
		return err
	}
	return b.LiveBlock(cx, blk, noValues{}, 0)
}

type noValues struct{}

func (noValues) Pin() spmi.LivePin           { return noValues{} }
func (noValues) Value(uint32) spmiwire.Value { return spmiwire.NoValue }

// A block's statistics are described without a node each, and the table
// stops at MaxRows rows, the others counted.
func TestDirectoryBounded(t *testing.T) {
	h := spmi.NewHierarchy(spmi.Config{Base: asn1tree.MustParse("1.3.6.1.4.1.32473.1")})
	h.Add(many{MaxRows + 7})
	h.Add(New(h.Current, nil).Provider())
	h.Refresh()
	s := h.Refresh()
	sample, err := s.Read([]string{"Directory/stats", "Directory/omitted", "Directory/stat/1/path", "Directory/stat/1/column"})
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, it := range sample.Items {
		got = append(got, it.Value.String())
	}
	if want := []string{strconv.Itoa(MaxRows), "7", "Many/v1", ""}; !slices.Equal(got, want) {
		t.Errorf("stats, omitted, first row's path and column: %q, want %q", got, want)
	}
}
