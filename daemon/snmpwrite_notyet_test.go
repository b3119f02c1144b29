package daemon

import (
	"log/slog"
	"strings"
	"testing"
)

// A hotset row just created over SNMP has no results until its first
// evaluation: a reader gets them as not measured yet (NotYet, with the
// reason), never as a failed source (docs/CONSUMERS.md).
func TestNewSNMPHotsetRowIsNotYet(t *testing.T) {
	c := fixtureConfig(t)
	d, err := New(c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ch, serr := d.WritableTables().TestSet(hotsetSet(c.Base, "fresh"))
	if serr != nil {
		t.Fatal(serr)
	}
	if err := ch.Commit(); err != nil {
		t.Fatal(err)
	}
	ch.Cleanup()
	d.h.Invalidate()
	paths := []string{"Hotset/fresh/avail", "Hotset/fresh/count", "Hotset/fresh/groups", "Hotset/fresh/error", "Hotset/fresh/errmsg"}
	smp, err := d.h.Fresh().Read(paths)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range smp.Items {
		if it.Err == nil || !it.NotYet || !strings.Contains(it.Err.Msg, "not evaluated yet") {
			t.Errorf("%s: %+v, want NotYet with the reason", it.Path, it)
		}
	}
}
