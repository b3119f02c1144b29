package expr

import (
	"testing"
	"time"

	"github.com/perfagent/subagent/spmi"
)

// FuzzParse parses any input and evaluates what parses on two
// snapshots (the second with counter rates): nothing panics, and no
// evaluation costs more than the expression's Bound.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"sum(Disk/*/busy)", "Disk/*/busy + Disk/*/qlen * 2", "Mem/free / Mem/size < 0.1 && !(count(Disk/*/qlen) > 2)",
		"avg(raw(Disk/*/busy)) % 3", "max(-Disk/*/qlen) >= abs(Mem/free - 1e3)", "((1))", "rate(Disk/sda/busy)", "Dsik/*/bussy"} {
		f.Add(s)
	}
	h := host{busy: map[string]uint64{"sda": 1, "sdb": 2, "sdc": 3}, qlen: map[string]int64{"sda": 1, "sdb": 0}, free: 3, size: 4}
	s0 := h.snap(f, time.Unix(1000, 0))
	h.busy["sdb"] = 10
	s1 := h.snap(f, time.Unix(1001, 0))
	f.Fuzz(func(t *testing.T, src string) {
		x, err := Parse(src)
		if err != nil {
			return
		}
		if x.Nodes() > MaxNodes {
			t.Fatalf("%q: %d nodes", src, x.Nodes())
		}
		r := NewRates()
		for _, s := range []*spmi.Snapshot{s0, s1} {
			env := r.Begin(s)
			res, err := x.Eval(env)
			env.End()
			if res.Cost > x.Bound() {
				t.Fatalf("%q cost %d > bound %d", src, res.Cost, x.Bound())
			}
			if err == nil && res.Vector != x.PerInstance() {
				t.Fatalf("%q: result per instance %v, parsed %v", src, res.Vector, x.PerInstance())
			}
		}
	})
}
