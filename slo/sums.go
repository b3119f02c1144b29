package slo

import (
	"slices"
	"time"
)

// Running sums: an objective keeps, for each span of minute buckets it
// reads (its window, the burn periods, the rules' windows), the sum of
// the span's newest buckets, and the sum of its whole hour ring, updated
// as buckets are added and as the rings roll (Observe, Evaluate). A read
// at the newest bucket takes them as they are; one later takes off the
// buckets that left its span since (the rings roll at every evaluation,
// so a minute or two), never re-summing a window: O(objectives). They
// are exactly what fine.sum and coarse.sum re-sum (TestRunningSums...).

// span is the sum of the n newest minute buckets, (head-n, head].
type span struct {
	n   int64
	sum [2]uint64 // total, bad
}

// spansOf are the minute spans o is read over under rules.
func spansOf(o Objective, rules []Rule) []span {
	var ns []int64
	add := func(d time.Duration) {
		if n := int64(d / Fine); n > 0 && n <= FineN && !slices.Contains(ns, n) {
			ns = append(ns, n)
		}
	}
	if o.Window <= FineSpan {
		add(o.Window)
	}
	for _, p := range Periods {
		add(p)
	}
	for _, r := range rules {
		add(r.Long)
		add(r.Short)
	}
	out := make([]span, len(ns))
	for i, n := range ns {
		out[i].n = n
	}
	return out
}

// setSpans makes x keep the spans of rules, summed from its buckets.
func (x *obj) setSpans(rules []Rule) {
	x.spans = spansOf(x.Objective, rules)
	x.resum()
}

// resum sums the running sums afresh from the buckets (after a restore).
func (x *obj) resum() {
	for i := range x.spans {
		t, b := x.f.sum(x.f.head, int(x.spans[i].n))
		x.spans[i].sum = [2]uint64{t, b}
	}
	if x.c != nil {
		t, b := x.c.sum(x.c.head)
		x.cSum = [2]uint64{t, b}
	}
}

// roll makes now's minute and hour the newest buckets (if they are not
// yet), taking the buckets that leave each span off its sum.
func (x *obj) roll(now time.Time) {
	if m := minuteOf(now); m > x.f.head {
		for i := range x.spans {
			sp := &x.spans[i]
			if x.f.head == 0 || m-x.f.head >= sp.n {
				sp.sum = [2]uint64{}
				continue
			}
			for k := x.f.head - sp.n + 1; k <= m-sp.n; k++ {
				sp.sum = minus(sp.sum, x.f.at(k))
			}
		}
		advance(&x.f.head, m, FineN, func(i int) { x.f.b[i] = [2]uint32{} })
	}
	if c := x.c; c != nil {
		if h, n := hourOf(now), int64(len(c.b)); h > c.head {
			// The hour buckets that leave the window are those cleared.
			if c.head == 0 || h-c.head >= n {
				x.cSum = [2]uint64{}
			} else {
				for k := c.head + 1; k <= h; k++ {
					x.cSum = minus(x.cSum, c.b[k%n])
				}
			}
			advance(&c.head, h, len(c.b), func(i int) { c.b[i] = [2]uint64{} })
		}
	}
}

// at is minute bucket k's counts (k in the ring; none before 1970).
func (f *fine) at(k int64) [2]uint64 {
	if k <= 0 {
		return [2]uint64{}
	}
	v := f.b[k%FineN]
	return [2]uint64{uint64(v[0]), uint64(v[1])}
}

func minus(a, b [2]uint64) [2]uint64 { return [2]uint64{a[0] - b[0], a[1] - b[1]} }

// fineSum is fine.sum(m, n) from the running sum of span n, for a read
// at minute m.
func (x *obj) fineSum(m, n int64) (total, bad uint64) {
	i := slices.IndexFunc(x.spans, func(s span) bool { return s.n == n })
	if i < 0 || m < x.f.head || x.f.head == 0 {
		return x.f.sum(m, int(n)) // a span not kept, a time before the newest bucket: rare
	}
	if m-x.f.head >= n {
		return 0, 0
	}
	s := x.spans[i].sum
	for k := x.f.head - n + 1; k <= m-n; k++ {
		s = minus(s, x.f.at(k)) // left the span since the last roll
	}
	return s[0], s[1]
}

// coarseSum is coarse.sum(h) from the running sum of the hour ring.
func (x *obj) coarseSum(h int64) (total, bad uint64) {
	c := x.c
	n := int64(len(c.b))
	if h < c.head || c.head == 0 {
		return c.sum(h)
	}
	if h-c.head >= n {
		return 0, 0
	}
	s := x.cSum
	for k := max(c.head-n+1, 1); k <= h-n; k++ {
		s = minus(s, c.b[k%n])
	}
	return s[0], s[1]
}
