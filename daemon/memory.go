package daemon

import (
	"os"
	"runtime/debug"
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

// TuneGC sets the collector's target to GCPercent unless the environment
// chose one (GOGC); it returns the target in force, -1 for GOGC's.
func TuneGC() int {
	if _, ok := os.LookupEnv("GOGC"); ok {
		return -1
	}
	debug.SetGCPercent(GCPercent)
	return GCPercent
}
