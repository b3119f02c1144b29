package dds

import (
	"sync"
	"time"
)

// readWindow keeps what SiShInterval and SiShSubscrib report: over the
// last window (the stamp timeout), the smallest gap between two reads of
// a supplier's values by consumers and the most values one read took.
// Two buckets of one window each make it a sliding window of one to two
// windows without keeping every read.
type readWindow struct {
	mu    sync.Mutex
	last  time.Time // previous read
	start time.Time // start of cur
	cur   readBucket
	prev  readBucket
}

type readBucket struct {
	gap time.Duration // smallest gap; 0 if fewer than two reads
	n   int           // most values read at once; 0 if no read
}

// MinInterval is the smallest SiShInterval the daemon reports, so that a
// supplier sleeping for it never spins.
const MinInterval = 100 * time.Millisecond

func (w *readWindow) read(now time.Time, n int, window time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.roll(now, window)
	if !w.last.IsZero() && now.Sub(w.last) < window {
		if g := now.Sub(w.last); w.cur.gap == 0 || g < w.cur.gap {
			w.cur.gap = g
		}
	}
	w.last = now
	w.cur.n = max(w.cur.n, n)
}

// roll starts a new bucket once cur is a window old; w.mu held.
func (w *readWindow) roll(now time.Time, window time.Duration) {
	switch age := now.Sub(w.start); {
	case w.start.IsZero():
		w.start = now
	case age >= 2*window:
		w.prev, w.cur, w.start = readBucket{}, readBucket{}, now
	case age >= window:
		w.prev, w.cur, w.start = w.cur, readBucket{}, w.start.Add(window)
	}
}

// values returns SiShInterval (ms) and SiShSubscrib at now: both 0 when
// nobody read within the window; a single read reports the window itself.
func (w *readWindow) values(now time.Time, window time.Duration) (interval, subscrib int32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.roll(now, window)
	n := max(w.cur.n, w.prev.n)
	if n == 0 {
		return 0, 0
	}
	gap := w.cur.gap
	if gap == 0 || (w.prev.gap != 0 && w.prev.gap < gap) {
		gap = w.prev.gap
	}
	if gap == 0 {
		gap = window
	}
	gap = max(gap, MinInterval)
	return int32(min(gap.Milliseconds(), 1<<31-1)), int32(min(n, 1<<31-1))
}
