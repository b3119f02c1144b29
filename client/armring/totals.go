package armring

import (
	"math/bits"
	"sync/atomic"
)

// Response-time bins: log-linear over microseconds, 8 per power of two
// (each at most 1/8 of its lower bound wide), exact below 16 µs; times
// from 2^37 µs (about 38 hours) share the last bin.
const (
	binSub  = 3
	binExp  = 36
	NumBins = (binExp-binSub)<<binSub + 2<<binSub
)

// Bin is the bin of a response time in nanoseconds.
func Bin(ns uint64) int {
	us := ns / 1000
	if us < 2<<binSub {
		return int(us)
	}
	e := bits.Len64(us) - 1
	if e > binExp {
		return NumBins - 1
	}
	return (e-binSub)<<binSub + int(us>>(e-binSub)&(1<<binSub-1)) + 1<<binSub
}

// BinBounds is the range of bin i in nanoseconds, [lo, hi): hi is
// MaxDur+1 for the last bin.
func BinBounds(i int) (lo, hi uint64) {
	if i < 2<<binSub {
		return uint64(i) * 1000, uint64(i+1) * 1000
	}
	if i >= NumBins-1 {
		return (1<<binSub | (NumBins-1)&(1<<binSub-1)) << (binExp - binSub) * 1000, MaxDur + 1
	}
	e := (i-1<<binSub)>>binSub + binSub
	sub := uint64(i & (1<<binSub - 1))
	lo = (1<<binSub | sub) << (e - binSub)
	return lo * 1000, (lo + 1<<(e-binSub)) * 1000
}

// MaxDur bounds a response time (ns); a larger one is refused.
const MaxDur = 1 << 62

// A transaction's counters (CounterLen bytes at CtrOff, by entry index).
// The process adds; the daemon takes (an atomic exchange with 0) the
// fields marked so, so that nothing can overflow between two drains.
const (
	ctrInflight = 0   // int64, started minus stopped instances
	ctrDropped  = 8   // records that could not be posted
	ctrAborted  = 16  // taken
	ctrFailed   = 24  // taken
	ctrSum      = 32  // taken: sum of (response time + 1) of good instances, so nonzero when there is one
	ctrLast     = 40  // response time of the last good instance
	ctrMin      = 48  // the largest ^(response time): the minimum, 0 none
	ctrMax      = 56  // the largest response time + 1: the maximum, 0 none
	ctrThresh   = 64  // daemon: MaxThresholds latency thresholds (ns), ascending, 0 ends them
	ctrSlow     = 96  // taken: per threshold, good instances slower than it
	ctrBins     = 128 // taken: NumBins uint64 counts of good instances
)

// maxCAS bounds the retries of a minimum or maximum: a hostile peer that
// keeps changing the word cannot hold the caller.
const maxCAS = 16

func casMax(p *uint64, v uint64) {
	for range maxCAS {
		o := atomic.LoadUint64(p)
		if o >= v || atomic.CompareAndSwapUint64(p, o, v) {
			return
		}
	}
}

// Complete adds a completed instance of transaction i to its totals: a
// few atomic additions, no record. Good instances update the minimum and
// maximum (the process's, never reset) before the bin and the sum, so
// that the daemon, which reads them after the bins, has the extremes of
// every instance it counts.
func (f *File) Complete(i uint32, status uint8, ns uint64) {
	off := f.ctrOff(i)
	switch status {
	case Abort:
		atomic.AddUint64(f.u64(off+ctrAborted), 1)
		return
	case Failed:
		atomic.AddUint64(f.u64(off+ctrFailed), 1)
		return
	}
	ns = min(ns, MaxDur)
	casMax(f.u64(off+ctrMin), ^ns)
	casMax(f.u64(off+ctrMax), ns+1)
	atomic.AddUint64(f.u64(off+ctrBins+8*uint64(Bin(ns))), 1)
	atomic.AddUint64(f.u64(off+ctrSum), ns+1)
	atomic.StoreUint64(f.u64(off+ctrLast), ns)
	// After the sum, which the daemon takes after these: every slow
	// instance it takes has its bin taken then or before.
	for k := range uint64(MaxThresholds) {
		th := atomic.LoadUint64(f.u64(off + ctrThresh + 8*k))
		if th == 0 {
			break
		}
		if ns > th {
			atomic.AddUint64(f.u64(off+ctrSlow+8*k), 1)
		}
	}
}

// MaxThresholds is how many latency thresholds (service level
// objectives) the library classifies each good instance of one
// transaction against, exactly, as it completes.
const MaxThresholds = 4

// SetThresholds sets the latency thresholds of transaction i (ns, at
// most MaxThresholds, ascending; fewer end with 0): the daemon, for its
// service level objectives. Slow counts taken afterwards refer to them.
func (f *File) SetThresholds(i uint32, th []uint64) {
	off := f.ctrOff(i)
	for k := range uint64(MaxThresholds) {
		v := uint64(0)
		if int(k) < len(th) {
			v = th[k]
		}
		atomic.StoreUint64(f.u64(off+ctrThresh+8*k), v)
	}
}

// Totals are what the daemon took from one transaction's counters: the
// instances completed since the last take.
type Totals struct {
	Good, Aborted, Failed uint64
	Mean                  uint64 // of the good ones' response times, ns
	Sum                   uint64 // of the good ones' response times, ns, unbounded (Mean is bounded)
	Last                  uint64 // of the last good instance, ns
	Min, Max              uint64 // bounds of the good ones' times, ns, within their lowest and highest bins
	Bins                  [NumBins]uint64
	// Slow counts, per threshold of SetThresholds, the good instances
	// slower than it. The library adds one after the instance's bin, and
	// Take takes them before the bins, so over successive takes they never
	// exceed Good; within one take they may, by instances whose bin an
	// earlier take had.
	Slow [MaxThresholds]uint64
}

// Done is every completion.
func (t *Totals) Done() uint64 { return t.Good + t.Aborted + t.Failed }

func take(p *uint64) uint64 {
	if atomic.LoadUint64(p) == 0 {
		return 0
	}
	return atomic.SwapUint64(p, 0)
}

// Take moves transaction i's totals into t (the daemon, at each drain)
// and reports whether there was any completion. A process writes these
// words: whatever they hold, t comes out bounded and consistent
// (Min <= Mean, Last <= Max <= MaxDur; counts at most MaxCount), never trusted
// beyond that.
func (f *File) Take(i uint32, t *Totals) bool {
	off := f.ctrOff(i)
	t.Good, t.Sum = 0, 0
	t.Aborted = min(take(f.u64(off+ctrAborted)), MaxCount)
	t.Failed = min(take(f.u64(off+ctrFailed)), MaxCount)
	for k := range uint64(MaxThresholds) {
		t.Slow[k] = min(take(f.u64(off+ctrSlow+8*k)), MaxCount)
	}
	if s := take(f.u64(off + ctrSum)); s != 0 {
		lo, hi := -1, -1
		for k := range t.Bins {
			n := min(take(f.u64(off+ctrBins+8*uint64(k))), MaxCount)
			t.Bins[k] = n
			if n != 0 {
				t.Good += n
				if lo < 0 {
					lo = k
				}
				hi = k
			}
		}
		if t.Good > MaxCount {
			t.Good = 0
			clear(t.Bins[:])
		}
		if t.Good > 0 {
			// The process's extremes, read after the bins, include those of
			// every instance counted (each sets them before its bin); within
			// the lowest and highest bins they bound this take's instances.
			llo, lhi := BinBounds(lo)
			hlo, hhi := BinBounds(hi)
			t.Min = min(max(^atomic.LoadUint64(f.u64(off+ctrMin)), llo), lhi-1)
			t.Max = max(min(atomic.LoadUint64(f.u64(off+ctrMax))-1, hhi-1), hlo, t.Min)
			s -= min(s, t.Good) // each added its time + 1
			t.Mean = min(max(s/t.Good, t.Min), t.Max)
			t.Sum = s // as the process added it: Mean is the bounded figure
			t.Last = min(max(atomic.LoadUint64(f.u64(off+ctrLast)), t.Min), t.Max)
		}
	}
	return t.Done() > 0 || t.Slow != [MaxThresholds]uint64{}
}

// MaxCount bounds the completions of one field in one take; a process
// claiming more is lying, and a take cannot overflow a sum.
const MaxCount = 1 << 40

// Untaken counts the completions of transaction i not yet taken: a
// process counts them as lost when the daemon of the file went away.
func (f *File) Untaken(i uint32) uint64 {
	off := f.ctrOff(i)
	n := atomic.LoadUint64(f.u64(off+ctrAborted)) + atomic.LoadUint64(f.u64(off+ctrFailed))
	if atomic.LoadUint64(f.u64(off+ctrSum)) != 0 {
		for k := range NumBins {
			n += atomic.LoadUint64(f.u64(off + ctrBins + 8*uint64(k)))
		}
	}
	return n
}
