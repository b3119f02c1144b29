package daemon

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// GCPercent is the collector's target the daemon runs with unless GOGC is
// set: the heap may grow to 1.5 times what is live instead of twice. Most
// of a large daemon's heap is its tree, which lives as long as the
// suppliers do, so the difference is resident memory bought for nothing;
// and what the runtime keeps for its largest heap (its spans' metadata)
// stays after the heap shrinks. At a million suppliers' statistics this
// keeps the daemon within 1.5 times its idle size once they leave
// (docs/PERFORMANCE.md), for one more collection per bulk walk.
const GCPercent = 50

// GCHeadroom is the least the heap may grow over what is live before the
// next collection. With GCPercent alone a small daemon (a few MB live)
// collected at nearly every reading of the host and every scrape, and the
// collections' wake-ups cost more than the reading (docs/FLEET.md, Cost);
// above 2×GCHeadroom live, GCPercent decides as before.
const GCHeadroom = 8 << 20

// TuneGC sets the collector's target to GCPercent unless the environment
// chose one (GOGC); it returns the target in force, -1 for GOGC's. After
// each collection the target is raised for a heap so small that
// GCPercent would leave it less than GCHeadroom to grow (gcPercentFor).
func TuneGC() int {
	gen := gcWatch.Add(1) // an earlier TuneGC's watch ends
	if _, ok := os.LookupEnv("GOGC"); ok {
		return -1
	}
	debug.SetGCPercent(GCPercent)
	watchGC(gen)
	return GCPercent
}

// gcWatch numbers TuneGC's calls; a watch whose number is not the last
// stops. gcTuned is the target the watch set last.
var gcWatch, gcTuned atomic.Int64

// onGCTuned, when set (by tests, before TuneGC), is called after the
// watch set the target.
var onGCTuned atomic.Pointer[func()]

// watchGC sets the target after the next collection, and again after each.
func watchGC(gen int64) {
	runtime.AddCleanup(new(gcSentinel), func(gen int64) {
		if gcWatch.Load() != gen {
			return
		}
		p := gcPercentFor(liveHeap())
		debug.SetGCPercent(p)
		gcTuned.Store(int64(p))
		if f := onGCTuned.Load(); f != nil {
			(*f)()
		}
		watchGC(gen)
	}, gen)
}

// gcSentinel is an object that becomes garbage at once: its cleanup runs
// once a collection has found it so.
type gcSentinel struct{ _ [64]byte }

// gcPercentFor is the target for a live heap of live bytes: GCPercent, or
// what lets the heap grow by GCHeadroom.
func gcPercentFor(live uint64) int {
	live = max(live, 1<<20)
	return max(GCPercent, int((GCHeadroom*100+live-1)/live))
}

// liveHeap is the heap the last collection found live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
