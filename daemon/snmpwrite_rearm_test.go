package daemon

import (
	"log/slog"
	"testing"

	"github.com/perfagent/subagent/agentx"
	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/hotset"
	"github.com/perfagent/subagent/mib/schema"
)

// withRearm is hotsetSet (threshold 80, excp_type trap) with
// hotsetDefRearm and hotsetDefCleared, cleared a TruthValue (1 true, 2
// false), or any integer to try.
func withRearm(base asn1tree.OID, name string, rearm, cleared int32) []agentx.VarBind {
	t := schema.HotsetDefTable
	return append(hotsetSet(base, name),
		agentx.VarBind{OID: hotsetCell(base, t.StatusArc()+1, name), Value: asn1tree.Int(rearm)},
		agentx.VarBind{OID: hotsetCell(base, t.StatusArc()+2, name), Value: asn1tree.Int(cleared)})
}

// A row created with hotsetDefRearm and hotsetDefCleared is a hotset
// with the falling threshold and the cleared switch, shown under
// Hotset/<name>/ and in the table, kept across a restart; a row without
// them has their defaults (0, false).
func TestHotsetRowRearmCleared(t *testing.T) {
	c := fixtureConfig(t)
	d, err := New(c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	w := d.WritableTables()
	if serr := set(t, w, withRearm(c.Base, "rearmed", 50, 1)); serr != nil {
		t.Fatal(serr)
	}
	if serr := set(t, w, hotsetSet(c.Base, "plain")); serr != nil {
		t.Fatal(serr)
	}
	want := map[string]hotset.Def{}
	for _, v := range d.hot.eng.Views() {
		want[v.Def.Name] = v.Def
	}
	if r := want["rearmed"]; r.Rearm != 50 || !r.Cleared {
		t.Errorf("the engine's rearmed: rearm %d cleared %v, want 50 true", r.Rearm, r.Cleared)
	}
	if p := want["plain"]; p.Rearm != 0 || p.Cleared {
		t.Errorf("the engine's plain: rearm %d cleared %v, want the defaults 0 false", p.Rearm, p.Cleared)
	}
	s, err := d.Hierarchy().Fresh().Read([]string{"Hotset/rearmed/rearm", "Hotset/rearmed/cleared", "Hotset/plain/rearm", "Hotset/plain/cleared"})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int64{50, 1, 0, 0} {
		if it := s.Items[i]; it.Err != nil || it.Value.Int64() != want {
			t.Errorf("%s: %v (%v), want %d", it.Path, it.Value, it.Err, want)
		}
	}
	view := w.View()
	for name, want := range map[string][2]int64{"rearmed": {50, 1}, "plain": {0, 2}} {
		for i, col := range []uint32{schema.HotsetDefTable.StatusArc() + 1, schema.HotsetDefTable.StatusArc() + 2} {
			if v, ok := view.Get(hotsetCell(c.Base, col, name)); !ok || v.Signed() != want[i] {
				t.Errorf("column %d of %s: %v (served %v), want %d", col, name, v, ok, want[i])
			}
		}
	}
	// nonVolatile: the next start restores both.
	again := loadSNMPHotsets(d.num, slog.New(slog.DiscardHandler))
	if r := again["rearmed"].def; r.Rearm != 50 || !r.Cleared {
		t.Errorf("restored rearmed: rearm %d cleared %v, want 50 true", r.Rearm, r.Cleared)
	}
}

// What the configuration file may not hold is refused as it is there
// (hotset.Def.Validate): inconsistentValue, or wrongValue for a value no
// row may hold; nothing changes.
func TestHotsetRowRearmRefused(t *testing.T) {
	c := fixtureConfig(t)
	d, err := New(c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	w := d.WritableTables()
	noExcp := func(name string) []agentx.VarBind {
		vbs := withRearm(c.Base, name, 50, 2)
		vbs[5].Value = asn1tree.Int(1) // hotsetDefExcpType none
		return vbs
	}
	for _, tc := range []struct {
		why  string
		vbs  []agentx.VarBind
		code agentx.ErrorCode
	}{
		{"rearm above the threshold 80", withRearm(c.Base, "bad", 90, 2), agentx.InconsistentValue},
		{"rearm of the other sign", withRearm(c.Base, "bad", -5, 2), agentx.InconsistentValue},
		{"cleared without rearm", withRearm(c.Base, "bad", 0, 1), agentx.InconsistentValue},
		{"rearm with excp_type none", noExcp("bad"), agentx.InconsistentValue},
		{"cleared 3 (TruthValue is 1 or 2)", withRearm(c.Base, "bad", 50, 3), agentx.WrongValue},
		{"cleared 0", withRearm(c.Base, "bad", 50, 0), agentx.WrongValue},
	} {
		serr := set(t, w, tc.vbs)
		if serr == nil || serr.Code != tc.code {
			t.Errorf("%s: %v, want %v", tc.why, serr, tc.code)
		}
	}
	// An active row's rearm changed to one the threshold refuses.
	if serr := set(t, w, withRearm(c.Base, "good", 50, 1)); serr != nil {
		t.Fatal(serr)
	}
	change := []agentx.VarBind{{OID: hotsetCell(c.Base, schema.HotsetDefTable.StatusArc()+1, "good"), Value: asn1tree.Int(81)}}
	if serr := set(t, w, change); serr == nil || serr.Code != agentx.InconsistentValue {
		t.Errorf("rearm 81 of an active row with threshold 80: %v, want inconsistentValue", serr)
	}
	if rows, defs := activeRows(d), engineDefs(d); len(rows) != 1 || rows[0] != "good" || len(defs) != 1 || defs[0] != "good" {
		t.Fatalf("after the refusals: rows %v, engine %v, want good alone", rows, defs)
	}
	if g := d.hot.eng.Views()[0].Def; g.Rearm != 50 || !g.Cleared {
		t.Errorf("good after a refused change: rearm %d cleared %v, want 50 true", g.Rearm, g.Cleared)
	}
}
