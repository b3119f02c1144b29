package slo

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/armring"
)

// checkSums wants every running sum of s equal to a re-sum of the
// buckets, read at the newest bucket, before it and at lags past it up
// to beyond the span.
func checkSums(t *testing.T, s *Set, r *rand.Rand, step int) {
	t.Helper()
	for _, x := range s.objs {
		for _, sp := range x.spans {
			for _, m := range []int64{x.f.head, x.f.head - r.Int64N(5), x.f.head + 1, x.f.head + r.Int64N(sp.n+3)} {
				gt, gb := x.fineSum(m, sp.n)
				wt, wb := x.f.sum(m, int(sp.n))
				if gt != wt || gb != wb {
					t.Fatalf("step %d: %s, %d minutes read at minute head%+d: running %d/%d, re-summed %d/%d",
						step, x.Name, sp.n, m-x.f.head, gt, gb, wt, wb)
				}
			}
		}
		if c := x.c; c != nil {
			n := int64(len(c.b))
			for _, h := range []int64{c.head, c.head - r.Int64N(3), c.head + 1, c.head + r.Int64N(n+3)} {
				gt, gb := x.coarseSum(h)
				wt, wb := c.sum(h)
				if gt != wt || gb != wb {
					t.Fatalf("step %d: %s, hour ring read at hour head%+d: running %d/%d, re-summed %d/%d",
						step, x.Name, h-c.head, gt, gb, wt, wb)
				}
			}
		}
	}
}

// The running sums equal a full re-sum of the buckets over a random
// history: drains of all sizes (saturating a minute bucket too), late
// drains into older buckets, gaps of minutes to weeks across day
// boundaries, evaluations that roll the rings, rules whose spans change,
// and saves and restores into a new Set, whose statuses (SLI, budget,
// burn rates) are those of the Set saved.
func TestRunningSumsEqualReSums(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 42))
	objs := []Objective{
		{Name: "hour", Application: "A", Transaction: "*", Threshold: 100 * time.Millisecond, Target: 0.999, Window: time.Hour},
		{Name: "day", Application: "A", Transaction: "*", Threshold: 300 * time.Millisecond, Target: 0.99, Window: 24 * time.Hour},
		{Name: "threedays", Application: "A", Transaction: "*", Target: 0.95, Window: FineSpan},
		{Name: "month", Application: "A", Transaction: "*", Threshold: 100 * time.Millisecond, Target: 0.999, Window: 720 * time.Hour},
		{Name: "week", Application: "A", Transaction: "*", Target: 0.9, Window: 7 * 24 * time.Hour},
	}
	rules := [][]Rule{DefaultRules, {{Name: "page", Factor: 2, Long: 2 * time.Hour, Short: 7 * time.Minute}, {Name: "ticket", Factor: 1, Long: FineSpan, Short: 90 * time.Minute}}}
	s := NewSet(objs)
	match := s.Match("A", "T")
	now := time.Date(2026, 11, 2, 23, 57, 30, 0, time.UTC) // a day boundary within minutes
	for step := range 1500 {
		switch k := r.IntN(100); {
		case k < 60: // a drain
			now = now.Add(time.Duration(r.Int64N(int64(90 * time.Second))))
		case k < 70: // a gap of up to a day
			now = now.Add(time.Duration(r.Int64N(int64(24 * time.Hour))))
		case k < 72: // of up to 5 weeks: past every minute ring, or the hour rings too
			now = now.Add(time.Duration(r.Int64N(int64(35 * 24 * time.Hour))))
		case k < 80: // a late drain, into a minute up to 3 hours back
			late := now.Add(-time.Duration(r.Int64N(int64(3 * time.Hour))))
			match.Observe(late, &armring.Totals{Good: r.Uint64N(50), Failed: r.Uint64N(3), Slow: [4]uint64{r.Uint64N(10), r.Uint64N(5)}})
		case k < 88:
			s.Evaluate(now)
		case k < 90:
			s.SetRules(rules[r.IntN(len(rules))])
		case k < 94: // a save and a restart
			want := s.Statuses(now)
			b := s.Marshal()
			s = NewSet(objs)
			s.SetRules(rules[r.IntN(len(rules))])
			if n, err := s.Unmarshal(b); err != nil || n != len(objs) {
				t.Fatalf("step %d: restore: %d, %v", step, n, err)
			}
			match = s.Match("A", "T")
			for i, got := range s.Statuses(now) {
				got.Raised, want[i].Raised = nil, nil // alarms are not saved
				if !reflect.DeepEqual(got, want[i]) {
					t.Fatalf("step %d: %s restored:\n%+v\nsaved:\n%+v", step, got.Name, got, want[i])
				}
			}
		default: // a minute's drain that saturates its bucket
			match.Observe(now, &armring.Totals{Good: 1 << 31, Failed: 1 << 30, Slow: [4]uint64{1 << 31}})
		}
		match.Observe(now, &armring.Totals{Good: r.Uint64N(1000), Aborted: r.Uint64N(2), Failed: r.Uint64N(5),
			Slow: [4]uint64{r.Uint64N(100), r.Uint64N(50)}})
		checkSums(t, s, r, step)
	}
}
