package daemon

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestTuneGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	t.Setenv("GOGC", "200")
	if got := TuneGC(); got != -1 || debug.SetGCPercent(100) != 100 {
		t.Fatalf("GOGC set: TuneGC %d changed the target", got)
	}
	// Unset for the rest of the test (Setenv restores it after).
	t.Setenv("GOGC", "")
	os.Unsetenv("GOGC")
	if got := TuneGC(); got != GCPercent || debug.SetGCPercent(100) != GCPercent {
		t.Fatalf("GOGC unset: TuneGC %d, target not %d", got, GCPercent)
	}
}
