package rtimearm

import (
	"math"
	"time"

	"github.com/perfagent/subagent/client/armring"
)

// window keeps the response times and completions of the last span in a
// fixed number of buckets, each a log-linear histogram (armring.Bin) with
// the minimum and maximum: bounded memory per transaction (about 7 KiB),
// percentiles within half a bin (1/16 of the value, docs/ARM.md).
type window struct {
	span    time.Duration
	since   time.Time // the earliest time its completions cover
	buckets [numBuckets]bucket
	// fields aggregates the counters and gauges per bucket; allocated at
	// the first such value, so transactions without them pay nothing.
	fields *[numBuckets][armring.NumMetrics]agg
}

// agg is one field's values within one bucket, or merged over the window.
type agg struct {
	n             uint64
	sum, min, max float64
}

func (a *agg) add(v float64) {
	if a.n == 0 {
		a.min, a.max = v, v
	}
	a.n, a.sum = a.n+1, a.sum+v
	a.min, a.max = min(a.min, v), max(a.max, v)
}

func (a *agg) merge(o *agg) {
	if o.n == 0 {
		return
	}
	if a.n == 0 {
		*a = *o
		return
	}
	a.n, a.sum = a.n+o.n, a.sum+o.sum
	a.min, a.max = min(a.min, o.min), max(a.max, o.max)
}

const numBuckets = 6

type bucket struct {
	epoch    int64 // start time / bucket length; 0 unused
	done     uint64
	good     uint64
	min, max uint64 // response times of the good ones, ns
	from     int64  // ns since 1970: the earliest time its completions cover; 0 none
	hist     [armring.NumBins]uint32
}

func newWindow(span time.Duration) *window { return &window{span: span} }

func (w *window) step() int64 { return max(int64(w.span)/numBuckets, 1) }

// slot is the index of now's bucket, cleared first if it holds an older
// period.
func (w *window) slot(now time.Time) int {
	e := now.UnixNano()/w.step() + 1
	k := int(e % numBuckets)
	if w.buckets[k].epoch != e {
		w.buckets[k] = bucket{epoch: e}
		if w.fields != nil {
			w.fields[k] = [armring.NumMetrics]agg{}
		}
	}
	return k
}

// add counts the completions of t, taken at now and made since from (the
// previous drain of their process). It returns the bucket's slot for
// addField.
func (w *window) add(now, from time.Time, t *armring.Totals) int {
	if w.since.IsZero() || from.Before(w.since) {
		w.since = from
	}
	k := w.slot(now)
	b := &w.buckets[k]
	if f := from.UnixNano(); b.from == 0 || f < b.from {
		b.from = f
	}
	b.done += t.Done()
	if t.Good > 0 {
		if b.good == 0 {
			b.min, b.max = t.Min, t.Max
		}
		b.good += t.Good
		b.min, b.max = min(b.min, t.Min), max(b.max, t.Max)
		for i, n := range t.Bins {
			if n != 0 {
				b.hist[i] = uint32(min(uint64(b.hist[i])+n, math.MaxUint32))
			}
		}
	}
	return k
}

// addField adds a value of metric field i to the bucket at slot k, as
// returned by add for the same completion.
func (w *window) addField(k, i int, v float64) {
	if w.fields == nil {
		w.fields = new([numBuckets][armring.NumMetrics]agg)
	}
	w.fields[k][i].add(v)
}

// field merges field i's values over the span ending now.
func (w *window) field(now time.Time, i int) agg {
	var a agg
	if w.fields != nil {
		w.live(now, func(k int) { a.merge(&w.fields[k][i]) })
	}
	return a
}

// live calls fn with the slot of each bucket inside the span ending now.
func (w *window) live(now time.Time, fn func(k int)) {
	cur := now.UnixNano()/w.step() + 1
	for k := range w.buckets {
		b := &w.buckets[k]
		if b.epoch != 0 && b.epoch > cur-numBuckets && b.epoch <= cur {
			fn(k)
		}
	}
}

// rate is completions per second over the time the window really
// covers: from the start of its oldest bucket (or the earliest time the
// completions taken into it cover), or from when this transaction was
// first measured when that is later, to now.
func (w *window) rate(now time.Time) float64 {
	var n uint64
	w.live(now, func(k int) { n += w.buckets[k].done })
	if n == 0 {
		return 0
	}
	step := w.step()
	oldest := now.UnixNano()/step - (numBuckets - 1) // its start / step
	start := oldest * step
	// Its first completions were taken at its start and made before.
	if b := &w.buckets[(oldest+1)%numBuckets]; b.epoch == oldest+1 && b.from != 0 {
		start = min(start, b.from)
	}
	from := time.Unix(0, start)
	if w.since.After(from) {
		from = w.since
	}
	return float64(n) / max(now.Sub(from), time.Millisecond).Seconds()
}

// quantiles returns the response times (ms) at each q, and false when the
// window holds no successful completion. The q-quantile is the rank-th
// smallest time (rank = q(n-1)+1); the value is the middle of its bin
// narrowed to the window's minimum and maximum, so it is within half a
// bin of the true one and never outside [min, max]; increasing qs give
// non-decreasing values.
func (w *window) quantiles(now time.Time, qs []float64, out []float64) bool {
	var sum [armring.NumBins]uint64
	var n, lo, hi uint64
	w.live(now, func(k int) {
		b := &w.buckets[k]
		if b.good == 0 {
			return
		}
		if n == 0 {
			lo, hi = b.min, b.max
		}
		n += b.good
		lo, hi = min(lo, b.min), max(hi, b.max)
		for i, c := range b.hist {
			sum[i] += uint64(c)
		}
	})
	if n == 0 {
		return false
	}
	for k, q := range qs {
		rank := uint64(q*float64(n-1)) + 1
		var acc uint64
		out[k] = float64(hi) / 1e6
		for i, c := range sum {
			acc += c
			if acc >= rank {
				blo, bhi := armring.BinBounds(i)
				a, b := max(blo, lo), min(bhi-1, hi)
				if a > b { // the extremes of another bucket: stay within them
					a, b = min(max(blo, lo), hi), max(min(bhi-1, hi), lo)
					a, b = min(a, b), max(a, b)
				}
				out[k] = (float64(a) + float64(b)) / 2 / 1e6
				break
			}
		}
	}
	return true
}
