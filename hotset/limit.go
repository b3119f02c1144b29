package hotset

import (
	"time"
)

// Limit bounds the reports of one hotset, whatever the number of its peer
// sets: Burst at once, then one per Every (a token bucket). A report is
// a notification and the daemon log's line for an event; the event's
// exception row is recorded all the same. Zero fields take the engine's
// default (SetLimit).
type Limit struct {
	Burst int
	Every time.Duration
}

// DefaultLimit lets a hotset report 10 events at once and one per 10 s
// after: with the guide's minimum frequency of 5 minutes, 30 peer sets
// crossing all the time never meet it, and a storm of new peer sets
// costs a manager at most 360 notifications an hour.
var DefaultLimit = Limit{Burst: 10, Every: 10 * time.Second}

// Ranges of a Limit's fields (0 stands for the default).
const (
	MaxBurst = 10000
	MinEvery = time.Second
	MaxEvery = 24 * time.Hour
)

// or fills l's zero fields from d.
func (l Limit) or(d Limit) Limit {
	if l.Burst == 0 {
		l.Burst = d.Burst
	}
	if l.Every == 0 {
		l.Every = d.Every
	}
	return l
}

// bucket is a hotset's token bucket with what it held back.
type bucket struct {
	tokens  float64
	filled  time.Time // when tokens were last topped up; zero: full
	pending uint64    // reports held back since the last one let through
	held    uint64    // reports held back in all
}

// take tells whether a report may go now, and if so spends a token.
func (b *bucket) take(now time.Time, l Limit) bool {
	if b.filled.IsZero() {
		b.tokens = float64(l.Burst)
	} else if dt := now.Sub(b.filled); dt > 0 {
		b.tokens += dt.Seconds() / l.Every.Seconds()
	}
	b.tokens = min(b.tokens, float64(l.Burst))
	b.filled = now
	if b.tokens >= 1 {
		b.tokens--
		return true
	}
	return false
}

// limit marks the events that the hotset's bucket holds back (Held) and
// gives each what it summarises (Suppressed); their Def carries the
// Limit in force.
func (s *state) limit(evs []Event, now time.Time, l Limit) {
	for i := range evs {
		evs[i].Def.Limit = l
		if s.bucket.take(now, l) {
			evs[i].Suppressed, s.bucket.pending = s.bucket.pending, 0
			continue
		}
		s.bucket.pending++
		s.bucket.held++
		evs[i].Held, evs[i].Suppressed = true, s.bucket.pending
	}
}
