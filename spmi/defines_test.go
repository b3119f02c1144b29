package spmi

import (
	"fmt"
	"testing"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
)

// definesTree has what Answer.Defines tells apart: a column no row has a
// value in (CPU freq, as an interface's speed), a scalar without a value
// (Mem/swap), rows of rows (ARM transactions, one application without
// any) and a live block whose statistic has no value now.
func definesTree(b *Builder) error {
	freq := spmiwire.StatDesc{Name: "freq", Descr: "Frequency", ASN: 9, Max: 100, Val: ddswire.SiQuantity}
	free := spmiwire.StatDesc{Name: "free", Descr: "Free", ASN: 1, Max: 100, Val: ddswire.SiQuantity}
	swap := spmiwire.StatDesc{Name: "swap", Descr: "Swap", ASN: 2, Max: 100, Val: ddswire.SiQuantity}
	cpu, err := b.Context(nil, &cpuCx)
	if err != nil {
		return err
	}
	for i := range 2 {
		c, err := b.Instance(cpu, &cpuInst, fmt.Sprintf("cpu%d", i), "", uint32(i+1))
		if err != nil {
			return err
		}
		if err := b.Stats(c, []spmiwire.StatDesc{idle, freq}, []spmiwire.Value{spmiwire.Uint(uint64(100 * (i + 1))), spmiwire.NoValue}); err != nil {
			return err
		}
	}
	mem, err := b.Context(nil, &CxDesc{Name: "Mem", Descr: "Memory", ASN: 2})
	if err != nil {
		return err
	}
	if err := b.Stats(mem, []spmiwire.StatDesc{free, swap}, []spmiwire.Value{spmiwire.Uint(7), spmiwire.NoValue}); err != nil {
		return err
	}
	rt, err := b.Context(nil, &rtCx)
	if err != nil {
		return err
	}
	arm, err := b.Context(rt, &appsCx)
	if err != nil {
		return err
	}
	web, err := b.Instance(arm, &appTpl, "web", "", 5)
	if err != nil {
		return err
	}
	login, err := b.Context(web, &CxDesc{Name: "login", Descr: "Transaction login", ASN: 7})
	if err != nil {
		return err
	}
	if err := b.Stat(login, &countSt, spmiwire.Uint(10)); err != nil {
		return err
	}
	if _, err := b.Instance(arm, &appTpl, "batch", "", 6); err != nil {
		return err
	}
	sup, err := b.Context(nil, &CxDesc{Name: "Sup", Descr: "Suppliers", ASN: 3, Inst: ddswire.SiContInst})
	if err != nil {
		return err
	}
	s1, err := b.Instance(sup, &CxDesc{Descr: "Supplier"}, "s1", "", 1)
	if err != nil {
		return err
	}
	blk, err := NewBlock([]spmiwire.StatDesc{{Name: "a", Descr: "a", ASN: 1, Val: ddswire.SiQuantity}, {Name: "b", Descr: "b", ASN: 2, Val: ddswire.SiQuantity}})
	if err != nil {
		return err
	}
	return b.LiveBlock(s1, blk, halfPins{}, 0)
}

// halfPins has a value for field 0 only.
type halfPins struct{}

func (halfPins) Pin() LivePin { return halfPins{} }
func (halfPins) Value(i uint32) spmiwire.Value {
	if i == 0 {
		return spmiwire.Uint(3)
	}
	return spmiwire.NoValue
}

func definesSnapshot(t *testing.T, v Views) *Snapshot {
	t.Helper()
	h := NewHierarchy(Config{Base: testBase, Views: v})
	h.Add(providerFunc(definesTree))
	s := h.Refresh()
	if len(s.Failures) > 0 {
		t.Fatal(s.Failures)
	}
	return s
}

// Defines answers by the objects of the tree: RFC 3416's noSuchInstance
// for any name under a column or a scalar it serves, with a value or
// not, noSuchObject for the rest.
func TestAnswerDefinesObjectsWithoutValues(t *testing.T) {
	tables := []struct {
		oid  string
		want bool
	}{
		{"200.1.1.1.19.1", true},   // CPU freq of cpu0: no row has a value
		{"200.1.1.1.19.9", true},   // ... of a row that does not exist
		{"200.1.1.1.19", true},     // the column itself
		{"200.1.1.1.14.1.5", true}, // under a cell
		{"200.1.1.1.2.9", true},    // the name column of a missing row
		{"200.1.1.1.3.9", true},    // the description column
		{"200.1.1.1.1.1", false},   // the index column: not-accessible
		{"200.1.1.1.29.1", false},  // no statistic 19 in the rows
		{"200.1.1.1", false},       // the entry
		{"200.1.1", false},
		{"200.1.1.2.14.1", false}, // not an entry
		{"200.1.9.1.14.1", false}, // no table of context 9
		{"200.2.1.1.1.14.1", false},
		{"201.2.13.1.1.13.6.1", true},  // transaction count of an application without transactions
		{"201.2.13.1.1.13.5.9", true},  // ... of a transaction that does not exist
		{"201.2.13.1.1.14.5.7", false}, // no such column
		{"200.2.13.1.1.13.5", false},   // the applications have no count
		{"200.2.13.1.1.2.5", true},     // an application's name
		{"200.1.3.1.12.1", true},       // the block's statistic without a value
		{"200.1.3.1.13.1", false},
		{"209.1.1.1.14.1", false}, // no table that deep
	}
	scalars := []struct {
		oid      string
		want     bool
		rowsStat bool // a row's statistic: a scalar only in the scalar view
	}{
		{"2.2.0", true, false},    // Mem/swap: no value
		{"2.2.7", true, false},    // a wrong instance of it
		{"2.2", true, false},      // the object itself
		{"2.1.0.1", true, false},  // under a served instance
		{"2.3.0", false, false},   // no statistic 3
		{"2", false, false},       // a context
		{"2.0", false, false},     // a context's instance 0
		{"1.1.9.0", true, true},   // CPU/cpu0/freq
		{"1.3.4.0", false, false}, // CPU/cpu2 does not exist
		{"1.1", false, false},
		{"13.1.5.7.3.0", true, true}, // a transaction's count: a row of rows
		{"3.1.2.0", true, true},      // the block's statistic without a value
		{"3.1.3.0", false, false},
		{"9.1.0", false, false},
		{"", false, false},
	}
	for _, v := range []Views{ViewBoth, ViewScalars, ViewTables} {
		s := definesSnapshot(t, v)
		ans := s.Answer()
		check := func(rel string, want bool) {
			t.Helper()
			o := testBase.Clone()
			if rel != "" {
				o = testBase.Append(asn1tree.MustParse(rel)...)
			}
			if got := asn1tree.Defines(ans, o); got != want {
				t.Errorf("views %d: Defines(base.%s) = %v, want %v", v, rel, got, want)
			}
		}
		for _, c := range tables {
			check(c.oid, c.want && v&ViewTables != 0)
		}
		for _, c := range scalars {
			check(c.oid, c.want && (!c.rowsStat || v&ViewScalars != 0))
		}
		// Whatever is served is under an object.
		vals := s.Values()
		for i := range vals.Len() {
			if o, _ := vals.At(i); !ans.Defines(o) {
				t.Errorf("views %d: %s is served but not under an object", v, o)
			}
		}
		for _, o := range []asn1tree.OID{asn1tree.MustParse("1.3.6.1.4.1.32473.2.1.0"), asn1tree.MustParse("1.3.6.1.4.1.32473"), {0, 0}, nil} {
			if ans.Defines(o) {
				t.Errorf("views %d: %s outside the base is under an object", v, o)
			}
		}
	}
	// The block's statistic without a value is not served.
	if _, ok := definesSnapshot(t, ViewBoth).Answer().Get(testBase.Append(200, 1, 3, 1, 12, 1)); ok {
		t.Error("a live statistic without a value is served")
	}
}
