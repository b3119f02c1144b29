package rtimearm

import (
	"math/bits"
	"time"
)

// window keeps the response times and completions of the last span in a
// fixed number of buckets, each a log-linear histogram: bounded memory per
// transaction (about 7 KiB), percentiles within about 6 %.
type window struct {
	span    time.Duration
	buckets [numBuckets]bucket
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

func (w *window) bucket(now time.Time) *bucket {
	e := now.UnixNano()/w.step() + 1
	b := &w.buckets[e%numBuckets]
	if b.epoch != e {
		*b = bucket{epoch: e}
	}
	return b
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

// add counts one completion; good ones carry their response time.
func (w *window) add(now time.Time, good bool, dur time.Duration) {
	b := w.bucket(now)
	b.done++
	if good {
		b.good++
		b.hist[binOf(uint64(dur/time.Microsecond))]++
	}
}

// live calls fn for the buckets inside the span ending now.
func (w *window) live(now time.Time, fn func(*bucket)) {
	cur := now.UnixNano()/w.step() + 1
	for i := range w.buckets {
		b := &w.buckets[i]
		if b.epoch != 0 && b.epoch > cur-numBuckets && b.epoch <= cur {
			fn(b)
		}
	}
}

// rate is completions per second over the span.
func (w *window) rate(now time.Time) float64 {
	var n uint64
	w.live(now, func(b *bucket) { n += b.done })
	return float64(n) / w.span.Seconds()
}

// quantiles returns the response times (ms) at each q, and false when the
// window holds no successful completion.
func (w *window) quantiles(now time.Time, qs []float64, out []float64) bool {
	var sum [numBins]uint64
	var n uint64
	w.live(now, func(b *bucket) {
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
