package notiflog

import (
	"testing"

	"github.com/perfagent/subagent/asn1tree"
)

// touchesSubtree agrees with its definition: start before the first OID
// past p's subtree, end after p.
func TestTouchesSubtree(t *testing.T) {
	p := asn1tree.OID{1, 3, 6, 1, 2, 1, 92}
	after := asn1tree.OID{1, 3, 6, 1, 2, 1, 93}
	oids := []asn1tree.OID{nil, {1}, {1, 3, 6, 1, 2, 1}, {1, 3, 6, 1, 2, 1, 91, 7}, p, {1, 3, 6, 1, 2, 1, 92, 0},
		{1, 3, 6, 1, 2, 1, 92, 1, 3, 1}, after, {1, 3, 6, 1, 2, 1, 93, 0}, {1, 3, 6, 1, 4, 1, 32473}, {2}}
	for _, start := range oids {
		for _, end := range oids {
			want := asn1tree.Compare(start, after) < 0 && (len(end) == 0 || asn1tree.Compare(end, p) > 0)
			if got := touchesSubtree(start, end, p); got != want {
				t.Errorf("touchesSubtree(%v, %v) = %v, want %v", start, end, got, want)
			}
		}
		if touchesSubtree(start, nil, nil) {
			t.Errorf("an empty subtree touched from %v", start)
		}
	}
}

// A search of the statistics beside the log, as every varbind of a scrape
// asks it, allocates nothing.
func TestSearchOutsideAllocatesNothing(t *testing.T) {
	l, _ := typedLog(t)
	v := (&MIB{L: l, Ext: extBase}).View()
	start := asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1, 200, 1, 1}
	end := asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1, 200, 1, 2}
	if n := testing.AllocsPerRun(100, func() {
		if _, _, ok := v.Search(start, false, end); ok {
			t.Fatal("found an entry of the log under the statistics")
		}
	}); n != 0 {
		t.Errorf("%v allocations a search", n)
	}
}

// BenchmarkSearchOutside is the log's part of a search for the statistics
// beside it, as every varbind of a scrape asks it (0 allocations; 2
// before the search stopped building the OID past the log's subtree).
func BenchmarkSearchOutside(b *testing.B) {
	l, _ := typedLog(b)
	v := (&MIB{L: l, Ext: extBase}).View()
	start := asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1, 200, 1, 1}
	b.ReportAllocs()
	for b.Loop() {
		v.Search(start, false, nil)
	}
}
