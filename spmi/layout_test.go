package spmi

import (
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
)

// The layout changes with an instance, a context or a description, never
// with values; Layout leaves out the parts it is told to.
func TestLayoutFollowsTheTreeNotTheValues(t *testing.T) {
	cx := CxDesc{Name: "Dsk", Descr: "Disks", ASN: 4, Inst: ddswire.SiCfgInst}
	tpl := CxDesc{Descr: "A disk"}
	ds := []spmiwire.StatDesc{{Name: "busy", Descr: "Busy", ASN: 1, Max: 100, Val: ddswire.SiQuantity}}
	layout := func(disks int, value uint64, descr string) uint64 {
		b := NewBuilder(asn1tree.MustParse("1.3.6.1.4.1.32473.1"), nil, time.Now())
		top, err := b.Context(nil, &cx)
		if err != nil {
			t.Fatal(err)
		}
		for i := range disks {
			n, err := b.Instance(top, &tpl, string(rune('a'+i)), "disk", uint32(i+1))
			if err != nil {
				t.Fatal(err)
			}
			d := ds
			if descr != "" {
				d = []spmiwire.StatDesc{ds[0]}
				d[0].Descr = descr
			}
			if err := b.Stats(n, d, []spmiwire.Value{spmiwire.Uint(value)}); err != nil {
				t.Fatal(err)
			}
		}
		s := b.Finish()
		// A Builder's snapshot is one part without a group's name.
		if s.Layout("") != 0 || s.Layout() == 0 || s.PartLayout("Dsk") == 0 {
			t.Fatalf("Layout() %d, without its one part %d, its part's %d", s.Layout(), s.Layout(""), s.PartLayout("Dsk"))
		}
		return s.Layout()
	}
	two := layout(2, 1, "")
	if layout(2, 7, "") != two {
		t.Error("the layout changed with a value")
	}
	if layout(3, 1, "") == two || layout(1, 1, "") == two {
		t.Error("the layout did not change with the number of instances")
	}
	if layout(2, 1, "Time busy") == two {
		t.Error("the layout did not change with a description")
	}
}
