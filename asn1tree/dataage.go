package asn1tree

import (
	"sync"
	"time"
)

// DataTimer is a View that tells when the data it answered from was
// collected: the oldest collection time of the values read through it,
// the zero time while it has read none.
type DataTimer interface {
	DataTime() time.Time
}

// ageWindow is the span over which DataAges keeps the largest age: the
// largest covers the last one to two windows.
const ageWindow = 30 * time.Second

// DataAges keeps how old the data of a front end's answers was: that of
// its last answer, and the largest of the last 30 to 60 seconds. The zero
// value is ready; it is safe for concurrent use.
type DataAges struct {
	mu        sync.Mutex
	last      time.Duration
	cur, prev time.Duration // the largest of the current window and of the one before
	start     time.Time     // of the current window
}

// Record notes an answer given at now from v. A view that is no
// DataTimer, or has read nothing dated, changes nothing.
func (a *DataAges) Record(v View, now time.Time) {
	d, ok := v.(DataTimer)
	if !ok {
		return
	}
	t := d.DataTime()
	if t.IsZero() {
		return
	}
	age := max(now.Sub(t), 0)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rotate(now)
	a.last = age
	a.cur = max(a.cur, age)
}

// Get returns the age of the last answer's data and the largest of the
// last 30 to 60 seconds before now.
func (a *DataAges) Get(now time.Time) (last, largest time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rotate(now)
	return a.last, max(a.cur, a.prev)
}

// rotate moves to the window holding now; windows are aligned on the
// first one, so the one before covers exactly ageWindow. a.mu is held.
func (a *DataAges) rotate(now time.Time) {
	if a.start.IsZero() {
		a.start = now
		return
	}
	d := now.Sub(a.start)
	if d < ageWindow {
		return
	}
	k := d / ageWindow
	if k == 1 {
		a.prev = a.cur
	} else {
		a.prev = 0
	}
	a.cur = 0
	a.start = a.start.Add(k * ageWindow)
}
