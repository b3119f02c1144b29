package slo

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/armring"
	"github.com/perfagent/subagent/rtimearm"
)

// benchSet is 1,000 objectives over 100 transaction classes (10 each:
// 4 latency thresholds, availability, windows of 1 h to 30 days) and the
// 100 matches the registry would hold.
func benchSet() (*Set, []rtimearm.Matched) {
	var objs []Objective
	for c := range 100 {
		for k := range 10 {
			o := Objective{Name: fmt.Sprintf("o%d_%d", c, k), Application: fmt.Sprintf("App%d", c), Transaction: "T*",
				Target: 0.999, Window: []time.Duration{time.Hour, 24 * time.Hour, 720 * time.Hour}[k%3]}
			if k < 8 {
				o.Threshold = time.Duration(k%4+1) * 100 * time.Millisecond
			}
			objs = append(objs, o)
		}
	}
	s := NewSet(objs)
	var ms []rtimearm.Matched
	for c := range 100 {
		ms = append(ms, s.Match(fmt.Sprintf("App%d", c), "Tran"))
	}
	return s, ms
}

// One drain's accounting: each of the 100 classes' totals handed to its
// 10 objectives. The daemon drains every 250 ms, whatever the rate: the
// totals of 1 million instances a second cost what those of one do.
func BenchmarkObserveDrain100Classes1000Objectives(b *testing.B) {
	_, ms := benchSet()
	tot := armring.Totals{Good: 2500, Failed: 3, Slow: [4]uint64{40, 20, 10, 5}}
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	b.ResetTimer()
	for i := range b.N {
		at := now.Add(time.Duration(i) * 250 * time.Millisecond)
		for _, m := range ms {
			m.Observe(at, &tot)
		}
	}
}

// An evaluation of the alarms (every slo.interval) and a read of SLO (at
// each refresh of the tree) with 1,000 objectives; resum is the read's
// sums as they were made before the running sums (sums.go), every
// window's buckets added up, for the figure before and after in one run.
func BenchmarkEvaluateAndRead1000Objectives(b *testing.B) {
	s, ms := benchSet()
	fill(s, ms)
	now := time.Date(2026, 11, 5, 9, 0, 0, 0, time.UTC)
	b.Run("evaluate", func(b *testing.B) {
		for range b.N {
			s.Evaluate(now)
		}
	})
	b.Run("read", func(b *testing.B) {
		for range b.N {
			s.Statuses(now)
		}
	})
	b.Run("resum", func(b *testing.B) {
		var sink uint64
		for range b.N {
			s.mu.Lock()
			for _, x := range s.objs {
				var t, bad uint64
				if x.c != nil {
					t, bad = x.c.sum(hourOf(now))
				} else {
					t, bad = x.f.sum(minuteOf(now), int(x.Window/Fine))
				}
				sink += t + bad
				for _, p := range Periods {
					t, bad = x.f.sum(minuteOf(now), int(p/Fine))
					sink += t + bad
				}
			}
			s.mu.Unlock()
		}
		runtime.KeepAlive(sink)
	})
}

// fill gives every objective 3 days of minute buckets.
func fill(s *Set, ms []rtimearm.Matched) {
	tot := armring.Totals{Good: 600, Failed: 1, Slow: [4]uint64{4, 3, 2, 1}}
	start := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	for m := range FineN {
		for _, x := range ms {
			x.Observe(start.Add(time.Duration(m)*time.Minute), &tot)
		}
	}
}

// The memory of 1,000 objectives, filled: reported per objective.
func BenchmarkMemoryPerObjective(b *testing.B) {
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s, ms := benchSet()
		fill(s, ms)
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/1000, "bytes/objective")
		runtime.KeepAlive(s)
	}
}
