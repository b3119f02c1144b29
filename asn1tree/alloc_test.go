package asn1tree

import "testing"

// Lookups run on every SNMP request: on a 100,000-entry tree, Get, GetNext
// and Search (hits, misses, before, between and after the entries, through
// the View interface too) must not allocate.
func TestLookupsDoNotAllocate(t *testing.T) {
	tr, oids := bigTree(t)
	var view View = tr
	probes := []OID{
		nil, MustParse("1.3"), MustParse("1.3.6.1.4.1.32473.1.10.100"),
		MustParse("1.3.6.1.4.1.32473.1.10.100.37.5"), // a context, not an entry
		MustParse("1.3.6.1.4.1.32473.1.10.100.38"),   // between instances
		MustParse("1.3.6.1.4.1.32473.1.10.101"),      // after all entries
		MustParse("2"),
	}
	for i := 0; i < len(oids); i += 997 {
		probes = append(probes, oids[i])
	}
	end := MustParse("1.3.6.1.4.1.32473.1.10.100.500")
	hits := 0
	allocs := testing.AllocsPerRun(10, func() {
		for _, o := range probes {
			if _, ok := tr.Get(o); ok {
				hits++
			}
			tr.GetNext(o)
			tr.Search(o, true, end)
			tr.Search(o, false, nil)
			view.Get(o)
			view.Search(o, false, end)
		}
	})
	if allocs != 0 {
		t.Fatalf("lookups allocate %v times per run of %d probes", allocs, len(probes))
	}
	if hits == 0 {
		t.Fatal("no probe hit an entry")
	}
}
