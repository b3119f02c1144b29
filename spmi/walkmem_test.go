package spmi

import (
	"cmp"
	"os"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

// changing is live100k rebuilt at every refresh, as a DDS tree whose
// suppliers come and go.
type changing struct {
	*live100k
	shape int
}

func (c *changing) Shape() any { return c.shape }

// heapMB is the live heap after a collection.
func heapMB() float64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// 256 walks held over a 100,000-statistic tree rebuilt twice a second
// (each walk starts half a second after the last, and all go on): with
// the default walk budget the heap stays under 120 MB; without a budget
// each walk would keep its own tree. WALKMEM=unbounded measures that.
func TestWalkMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 256 trees of 100,000 statistics")
	}
	synctest.Test(t, func(t *testing.T) {
		p := &changing{live100k: newLive100k()}
		h := NewHierarchy(Config{Base: testBase})
		h.Add(p)
		w := &asn1tree.Walks[int]{Hold: time.Hour, Gap: time.Hour}
		if os.Getenv("WALKMEM") == "unbounded" {
			w.Budget = 1 << 40
		}
		before := heapMB()
		var last *Snapshot
		for i := range 256 {
			p.shape++
			s := h.Refresh()
			if s.NumStats != 100000 {
				t.Fatalf("%d statistics", s.NumStats)
			}
			w.Record(asn1tree.Step{}, i, s, []asn1tree.OID{{1, 3, uint32(i)}})
			last = s
			time.Sleep(500 * time.Millisecond)
		}
		after := heapMB()
		per := float64(last.Bytes()) / (1 << 20)
		budget := cmp.Or(w.Budget, asn1tree.DefaultWalkBudget)
		t.Logf("heap %.1f MB before, %.1f MB with 256 walks (budget %d MiB, %d walks fell back, %.1f MiB kept as estimated, %.2f MiB a tree estimated)",
			before, after, budget>>20, w.FellBack(), float64(w.PinnedBytes())/(1<<20), per)
		if w.Budget == 0 && after >= 120 {
			t.Errorf("heap %.1f MB with 256 walks, want < 120", after)
		}
		if w.Len() != 256 {
			t.Errorf("%d walks remembered, want 256", w.Len())
		}
		last = nil
		// The walks expire, and the loop returning memory ends.
		time.Sleep(2 * time.Hour)
		synctest.Wait()
	})
}
