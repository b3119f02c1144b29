package notiflog

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

// randomView is a log of n entries with random VarBinds of every kind
// (NoValue ones are not served), some restored, indexes from first (which
// may wrap past 2^32-1 to 1).
func randomView(r *rand.Rand, n int, first uint32) View {
	kinds := []asn1tree.Kind{asn1tree.Counter32, asn1tree.Gauge32, asn1tree.TimeTicks, asn1tree.Integer32,
		asn1tree.OctetString, asn1tree.ObjectIdentifier, asn1tree.Counter64, asn1tree.NoValue}
	v := View{Max: 77, Age: 3 * time.Hour, Version: 9, Stats: Stats{Logged: 1<<32 + 5, Evicted: 3}}
	idx := first
	for i := 0; i < n; i++ {
		e := Entry{Index: idx, Uptime: time.Duration(r.IntN(1e6)) * time.Millisecond, Time: time.Unix(1700000000+int64(i), 0),
			OID: asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1, 0, uint32(r.IntN(3) + 1)}, Restored: r.IntN(4) == 0, Omitted: r.IntN(2)}
		for j := r.IntN(6); j > 0; j-- {
			k := kinds[r.IntN(len(kinds))]
			e.Vars = append(e.Vars, Var{OID: asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1, 14, 0, uint32(r.IntN(11) + 1), 0}, Kind: k,
				Num: r.Uint64(), Bytes: []byte("x"), Obj: asn1tree.OID{1, 3, uint32(r.IntN(9))}})
		}
		if r.IntN(2) == 0 {
			e.Outcomes = []Outcome{{Path: "master", Result: "sent", OK: true}, {Path: "v2c inform 127.0.0.1:162", Result: Pending}}
		}
		v.Entries = append(v.Entries, e)
		if idx++; idx == 0 {
			idx = 1
		}
	}
	return v
}

func sameValue(a, b asn1tree.Value) bool {
	return a.Kind == b.Kind && a.Num == b.Num && a.Str == b.Str && a.OID.Equal(b.OID)
}

// The indexed view answers every Get and Search as the materialized tree
// of the same log does: a walk visits the same cells in the same order,
// Gets of cells and of names that are none agree, searches bounded by an
// end stop where the tree's do. Logs with wrapped indexes, restored
// entries, every VarBind kind, empty logs, and the outcome table placed
// before and after mib-2 92.
func TestMIBViewMatchesMaterializedTree(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		n     int
		first uint32
		ext   asn1tree.OID
	}{
		{0, 1, benchExt}, {1, 1, nil}, {40, 1, benchExt}, {40, 1<<32 - 20, benchExt},
		{25, 1<<32 - 3, asn1tree.OID{1, 3, 6, 1, 2, 1, 50, 111}}, {60, 100, asn1tree.OID{1, 3, 6, 1, 2, 1, 92, 7}},
	} {
		v := randomView(r, c.n, c.first)
		ref := buildReference(&v, c.ext)
		got := newMIBView(v, c.ext)
		// The walk from the start.
		o, n := asn1tree.OID{1}, 0
		for {
			wo, wv, wok := ref.Search(o, false, nil)
			go1, gv, gok := got.Search(o, false, nil)
			if wok != gok || wok && (!wo.Equal(go1) || !sameValue(wv, gv)) {
				t.Fatalf("n=%d first=%d ext=%s: next after %s: got %s %v %v, want %s %v %v", c.n, c.first, c.ext, o, go1, gv, gok, wo, wv, wok)
			}
			if !wok {
				break
			}
			o, n = wo, n+1
		}
		if n != ref.Len() {
			t.Fatalf("walk visited %d of %d cells", n, ref.Len())
		}
		for i := 0; i < ref.Len(); i++ {
			ro, rv := ref.At(i)
			if gv, ok := got.Get(ro); !ok || !sameValue(gv, rv) {
				t.Fatalf("Get %s: %v %v, want %v", ro, gv, ok, rv)
			}
			if io, _, ok := got.Search(ro, true, nil); !ok || !io.Equal(ro) {
				t.Fatalf("Search %s inclusive: %s %v", ro, io, ok)
			}
			// Names around the cell: its prefixes, a longer name, the
			// next sub-identifier; all agree with the tree.
			probes := []asn1tree.OID{ro[:len(ro)-1], ro.Append(0), append(ro[:len(ro)-1:len(ro)-1], ro[len(ro)-1]+1)}
			if len(ro) > 3 {
				probes = append(probes, ro[:len(ro)-2], ro[:len(ro)-3])
			}
			for _, p := range probes {
				rv, rok := ref.Get(p)
				gv, gok := got.Get(p)
				if rok != gok || rok && !sameValue(rv, gv) {
					t.Fatalf("Get %s: got %v %v, want %v %v", p, gv, gok, rv, rok)
				}
				for _, inc := range []bool{false, true} {
					end := append(ro[:len(ro)-1:len(ro)-1], ro[len(ro)-1]+2)
					wo, _, wok := ref.Search(p, inc, end)
					go1, _, gok := got.Search(p, inc, end)
					if wok != gok || wok && !wo.Equal(go1) {
						t.Fatalf("Search %s (include %v, end %s): got %s %v, want %s %v", p, inc, end, go1, gok, wo, wok)
					}
				}
			}
		}
	}
}
