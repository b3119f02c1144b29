package asn1tree

import "testing"

// bigTree builds a tree shaped like a large hierarchy: 1,000 instances of
// 100 statistics each under a 9-arc base, 100,000 entries in all.
func bigTree(b testing.TB) (*Tree[Value], []OID) {
	base := MustParse("1.3.6.1.4.1.32473.1.10.100")
	var entries []Entry[Value]
	for inst := uint32(1); inst <= 1000; inst++ {
		for st := uint32(1); st <= 100; st++ {
			entries = append(entries, Entry[Value]{OID: base.Append(inst*37, st, 0), Val: Counter(uint64(inst * st))})
		}
	}
	oids := make([]OID, len(entries))
	for i := range entries {
		oids[i] = entries[i].OID
	}
	t, err := Build(entries)
	if err != nil {
		b.Fatal(err)
	}
	return t, oids
}

func BenchmarkGet100k(b *testing.B) {
	t, oids := bigTree(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok := t.Get(oids[(i*7919)%len(oids)]); !ok {
			b.Fatal("missing")
		}
	}
}

func BenchmarkGetNext100k(b *testing.B) {
	t, oids := bigTree(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t.GetNext(oids[(i*7919)%len(oids)])
	}
}

func BenchmarkWalk100k(b *testing.B) {
	t, _ := bigTree(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := 0
		var o OID
		for {
			next, _, ok := t.GetNext(o)
			if !ok {
				break
			}
			o = next
			n++
		}
		if n != t.Len() {
			b.Fatal(n)
		}
	}
}

// BenchmarkGetMapBaseline is the comparison for BenchmarkGet100k: a Go map
// keyed by the dotted OID string, as a naive agent would keep it, with the
// key formatted per lookup as a request would need. It cannot answer GetNext.
func BenchmarkGetMapBaseline100k(b *testing.B) {
	t, oids := bigTree(b)
	m := make(map[string]Value, t.Len())
	for i := 0; i < t.Len(); i++ {
		o, v := t.At(i)
		m[o.String()] = v
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok := m[oids[(i*7919)%len(oids)].String()]; !ok {
			b.Fatal("missing")
		}
	}
}
