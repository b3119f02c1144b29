package rtimearm

import (
	"math/bits"
	"time"

	"github.com/perfagent/subagent/armring"
)

// window keeps the response times and completions of the last span in a
// fixed number of buckets, each a log-linear histogram: bounded memory per
// transaction (about 7 KiB), percentiles within about 6 %.
type window struct {
	span    time.Duration
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

const (
	numBuckets = 6
	subBits    = 3  // 8 bins per power of two
	maxExp     = 36 // 2^36 µs, about 19 hours; longer is clamped
	numBins    = (maxExp-subBits)<<subBits + 2<<subBits
)

type bucket struct {
	epoch int64 // start time / bucket length; 0 unused
	done  uint64
	good  uint64
	hist  [numBins]uint32
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

// binOf maps microseconds to a bin.
func binOf(us uint64) int {
	if us < 2<<subBits {
		return int(us)
	}
	e := bits.Len64(us) - 1
	if e > maxExp {
		return numBins - 1
	}
	return (e-subBits)<<subBits + int(us>>(e-subBits)&(1<<subBits-1)) + 1<<subBits
}

// binMid is the middle of a bin, in microseconds.
func binMid(i int) float64 {
	if i < 2<<subBits {
		return float64(i)
	}
	e := (i-1<<subBits)>>subBits + subBits
	sub := uint64(i & (1<<subBits - 1))
	lo := (1<<subBits | sub) << (e - subBits)
	width := uint64(1) << (e - subBits)
	return float64(lo) + float64(width)/2
}

// add counts one completion; good ones carry their response time. It
// returns the bucket's slot for addField.
func (w *window) add(now time.Time, good bool, dur time.Duration) int {
	k := w.slot(now)
	b := &w.buckets[k]
	b.done++
	if good {
		b.good++
		b.hist[binOf(uint64(dur/time.Microsecond))]++
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

// rate is completions per second over the span.
func (w *window) rate(now time.Time) float64 {
	var n uint64
	w.live(now, func(k int) { n += w.buckets[k].done })
	return float64(n) / w.span.Seconds()
}

// quantiles returns the response times (ms) at each q, and false when the
// window holds no successful completion.
func (w *window) quantiles(now time.Time, qs []float64, out []float64) bool {
	var sum [numBins]uint64
	var n uint64
	w.live(now, func(k int) {
		b := &w.buckets[k]
		n += b.good
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
		for i, c := range sum {
			acc += c
			if acc >= rank {
				out[k] = binMid(i) / 1000
				break
			}
		}
	}
	return true
}
