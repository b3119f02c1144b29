package hotset

import (
	"fmt"
	"testing"
	"time"
)

// One evaluation of a top-5 hotset over 5000 peers (a busy host's
// processes), counters compared as rates.
func BenchmarkEvaluate5000Peers(b *testing.B) {
	f, c := newFake(), newClock()
	for i := 0; i < 5000; i++ {
		f.busy[fmt.Sprintf("d%05d", i)] = uint64(i)
	}
	e, err := New([]Def{{Name: "top", GrandParent: "Disk", Stat: "busy", MaxResp: 5, Feed: FeedAlways}}, 5, c.now)
	if err != nil {
		b.Fatal(err)
	}
	s1 := snapAt(f, c.t)
	c.add(time.Second)
	for k := range f.busy {
		f.busy[k] += 7
	}
	s2 := snapAt(f, c.t)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Evaluate(s1)
		e.Evaluate(s2)
	}
}
