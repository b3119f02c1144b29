package rtimelan

import "time"

// Scheduler decides when each host gets its echo request. A cycle starts
// at a timer tick (every Interval) and sends one request per host, spread
// evenly over the interval but never closer together than MinGap (the
// inverse of maxrate). A cycle that needs longer than the interval runs to
// its end; the ticks that fall within it are skipped, and the next cycle
// starts at the first tick after it.
//
// Scheduler is driven by the caller's clock: Step is given the time and
// says what to do now and when to call again, so that tests can run hours
// of schedule without waiting.
type Scheduler struct {
	Interval time.Duration
	MinGap   time.Duration

	// Cycles and Skipped count the cycles started and the ticks skipped.
	Cycles  uint64
	Skipped uint64

	nextTick  time.Time // first tick not yet used or skipped
	cycleTick time.Time // the tick the running cycle started on
	start     time.Time // when the running cycle started
	cycle     []string  // the hosts of the running cycle
	next      int       // index in cycle of the next host to send to
	gap       time.Duration
	lastSend  time.Time
	sent      bool
}

// NewScheduler returns a scheduler whose first tick is at the first Step.
func NewScheduler(interval time.Duration, maxrate int) *Scheduler {
	s := &Scheduler{}
	s.Set(interval, maxrate)
	return s
}

// Set changes the interval and rate; a running cycle keeps its spacing,
// the next one uses the new values.
func (s *Scheduler) Set(interval time.Duration, maxrate int) {
	s.Interval = max(interval, time.Millisecond)
	s.MinGap = time.Second / time.Duration(max(maxrate, 1))
}

// Step is called at now with the current host list (asked for only when
// a cycle starts). It returns the host to send to now, or "", and the time
// at which to call Step again.
func (s *Scheduler) Step(now time.Time, hosts func() []string) (string, time.Time) {
	if s.nextTick.IsZero() {
		s.nextTick = now
	}
	if s.next >= len(s.cycle) {
		if now.Before(s.nextTick) {
			return "", s.nextTick
		}
		// Woken late (the process was stopped): the ticks missed are
		// skipped and the cycle starts on the latest one.
		missed := uint64(now.Sub(s.nextTick) / s.Interval)
		s.Skipped += missed
		s.cycleTick = s.nextTick.Add(time.Duration(missed) * s.Interval)
		s.nextTick = s.cycleTick.Add(s.Interval)
		s.cycle, s.next, s.start = hosts(), 0, now
		s.Cycles++
		if len(s.cycle) == 0 {
			return "", s.nextTick
		}
		s.gap = max(s.Interval/time.Duration(len(s.cycle)), s.MinGap)
	}
	due := s.start.Add(time.Duration(s.next) * s.gap)
	if s.sent && due.Before(s.lastSend.Add(s.MinGap)) {
		due = s.lastSend.Add(s.MinGap)
	}
	if now.Before(due) {
		return "", due
	}
	host := s.cycle[s.next]
	s.next++
	s.lastSend, s.sent = now, true
	if s.next < len(s.cycle) {
		return host, s.start.Add(time.Duration(s.next) * s.gap)
	}
	// The cycle ends with this send: ticks up to now fell within it.
	if !now.Before(s.nextTick) {
		k := uint64(now.Sub(s.nextTick)/s.Interval) + 1
		s.Skipped += k
		s.nextTick = s.nextTick.Add(time.Duration(k) * s.Interval)
	}
	s.cycle = nil
	return host, s.nextTick
}
