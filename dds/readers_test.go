package dds

import (
	"testing"
	"time"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/ddswire/ddswiretest"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/spmi"
)

func TestReadWindow(t *testing.T) {
	const win = 30 * time.Second
	t0 := time.Unix(1000, 0)
	var w readWindow
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	check := func(when time.Duration, iv, n int32) {
		t.Helper()
		if gi, gn := w.values(at(when), win); gi != iv || gn != n {
			t.Fatalf("at %v: interval %d ms, subscrib %d; want %d, %d", when, gi, gn, iv, n)
		}
	}
	check(0, 0, 0) // nobody has read
	w.read(at(0), 4, win)
	check(time.Second, 30000, 4) // one read: no gap yet, the window stands in
	w.read(at(5*time.Second), 4, win)
	w.read(at(7*time.Second), 6, win)
	check(8*time.Second, 2000, 6) // the smallest gap, the most values
	w.read(at(7*time.Second+10*time.Millisecond), 1, win)
	check(8*time.Second, 100, 6) // gaps below 100 ms report 100 ms
	// The next window remembers the previous one...
	w.read(at(40*time.Second), 2, win)
	check(41*time.Second, 100, 6)
	// ...and forgets it a window later.
	w.read(at(65*time.Second), 2, win)
	check(66*time.Second, 25000, 2)
	// Nobody reads for two windows: both fall to 0.
	check(130*time.Second, 0, 0)
}

// readAll reads the statistic at path as a consumer would, which pins its
// supplier's values: a read of all of them.
func readAll(t *testing.T, h *spmi.Hierarchy, path string) {
	t.Helper()
	if it := h.Refresh().Answer().Item(path); it.Err != nil {
		t.Fatalf("read %s: %v", path, it.Err)
	}
}

// The daemon's periodic refresh is nobody's read: it leaves SiShSubscrib
// at 0, so a supplier can slow down while no manager looks.
func TestBackgroundRefreshIsNotARead(t *testing.T) {
	s, h := testServer(t, nil)
	ts := newSupFile(t, ddswiretest.GuideInit())
	ts.register(s, spmierr.SiSuccess)
	h.Invalidate()
	h.RefreshBackground()
	if hd := ddswire.DecodeHeader(ts.mem); hd.Subscrib != 0 || hd.Interval != 0 {
		t.Fatalf("after a background refresh: SiShSubscrib %d, SiShInterval %d; want 0, 0", hd.Subscrib, hd.Interval)
	}
	readAll(t, h, "DDS/IBM/Test/gadgets")
	if hd := ddswire.DecodeHeader(ts.mem); hd.Subscrib != 4 || hd.Interval <= 0 {
		t.Fatalf("after a read: SiShSubscrib %d, SiShInterval %d; want 4 and a positive interval", hd.Subscrib, hd.Interval)
	}
}
