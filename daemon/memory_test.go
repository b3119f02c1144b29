package daemon

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestTuneGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	defer gcWatch.Add(1) // no watch outlives the test
	t.Setenv("GOGC", "200")
	if got := TuneGC(); got != -1 || debug.SetGCPercent(100) != 100 {
		t.Fatalf("GOGC set: TuneGC %d changed the target", got)
	}
	// Unset for the rest of the test (Setenv restores it after).
	t.Setenv("GOGC", "")
	os.Unsetenv("GOGC")
	tuned := make(chan struct{}, 1)
	notify := func() {
		select {
		case tuned <- struct{}{}:
		default:
		}
	}
	onGCTuned.Store(&notify)
	defer onGCTuned.Store(nil)
	if got := TuneGC(); got != GCPercent {
		t.Fatalf("GOGC unset: TuneGC %d, want %d", got, GCPercent)
	}
	// After a collection the watch sets the target for the live heap:
	// this test's is far under 2×GCHeadroom, so above GCPercent.
	runtime.GC()
	select {
	case <-tuned: // the cleanup ran, on its own goroutine
	case <-time.After(10 * time.Second):
		t.Fatal("no target set 10 s after a collection")
	}
	set := int(gcTuned.Load())
	if live := liveHeap(); live >= GCHeadroom || set <= GCPercent {
		t.Fatalf("after a collection with %d bytes live the target is %d, want above %d", live, set, GCPercent)
	}
	if got := debug.SetGCPercent(100); got <= GCPercent {
		t.Errorf("target in force %d, want the watch's (above %d)", got, GCPercent)
	}
}

// The target gives a small heap GCHeadroom to grow and leaves a large one
// at GCPercent.
func TestGCPercentFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 800},                    // counted as 1 MB
		{2 << 20, 400},              // 2 MB + 8 MB
		{3 << 20, 267},              // rounded up: at least the headroom
		{16 << 20, GCPercent},       // 8 MB is GCPercent's 50 %
		{100 << 20, GCPercent},      // 50 MB to grow
		{GCHeadroom * 4, GCPercent}, // well above
	} {
		if got := gcPercentFor(c.live); got != c.want {
			t.Errorf("gcPercentFor(%d) = %d, want %d", c.live, got, c.want)
		}
		if g := c.live + c.live*uint64(gcPercentFor(c.live))/100; c.live >= 1<<20 && g < c.live+GCHeadroom {
			t.Errorf("live %d: goal %d leaves less than the headroom", c.live, g)
		}
	}
}
