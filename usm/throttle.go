package usm

import (
	"fmt"
	"net/netip"
	"sync"
	"time"
)

// Limits bound one kind of SNMPv3 failure per source (Throttle): a token
// bucket of Burst failures, refilled at PerMinute.
type Limits struct {
	PerMinute int // failures a source may have a minute, sustained
	Burst     int // failures a source may have at once
	Sources   int // sources remembered; more evict those that are least restricted
}

// Defaults and bounds of Limits. Failures are the guesses of a password
// (wrong digests, unknown users, levels, decryption errors): 30 a minute
// make an online guess cost 2 s once the burst is spent. Discoveries
// (unknown engine IDs) start every session of a manager and reveal no
// secret: they get more.
var (
	DefaultFailureLimits   = Limits{PerMinute: 30, Burst: 10, Sources: 4096}
	DefaultDiscoveryLimits = Limits{PerMinute: 600, Burst: 60, Sources: 4096}
)

const (
	MaxPerMinute = 60000
	MaxBurst     = 10000
	MinSources   = 16
	MaxSources   = 1 << 20
)

// WithDefaults fills l's zero fields from def.
func (l Limits) WithDefaults(def Limits) Limits {
	if l.PerMinute == 0 {
		l.PerMinute = def.PerMinute
	}
	if l.Burst == 0 {
		l.Burst = def.Burst
	}
	if l.Sources == 0 {
		l.Sources = def.Sources
	}
	return l
}

// Check says which field is out of its bounds; the error starts with the
// field's configuration key (per_minute, burst, sources) and a colon.
func (l Limits) Check() error {
	switch {
	case l.PerMinute < 1 || l.PerMinute > MaxPerMinute:
		return fmt.Errorf("per_minute: %d is not from 1 to %d", l.PerMinute, MaxPerMinute)
	case l.Burst < 1 || l.Burst > MaxBurst:
		return fmt.Errorf("burst: %d is not from 1 to %d", l.Burst, MaxBurst)
	case l.Sources < MinSources || l.Sources > MaxSources:
		return fmt.Errorf("sources: %d is not from %d to %d", l.Sources, MinSources, MaxSources)
	}
	return nil
}

// Throttle counts one kind of failure per source address against Limits.
// An IPv6 source counts by its /64, which one host usually holds whole;
// an IPv4-mapped address as its IPv4 address. Memory is bounded: at most
// Sources buckets (about 64 bytes each). When full, the buckets that are
// full again (which are as good as forgotten) are dropped, then, if that
// freed less than an eighth, arbitrary others: a source that was
// evicted starts again with a full burst, so Sources should exceed the
// addresses an attacker holds. Safe for concurrent use.
type Throttle struct {
	lim Limits
	mu  sync.Mutex
	m   map[netip.Addr]bucket
}

// bucket is a GCRA token bucket: full again at full; each failure moves
// full one interval on, and a failure is within the limit while full
// stays within Burst intervals of now. Exact, in integer time.
type bucket struct{ full time.Time }

// NewThrottle returns a Throttle of l (Check must have passed).
func NewThrottle(l Limits) *Throttle {
	return &Throttle{lim: l, m: map[netip.Addr]bucket{}}
}

// sourceKey is what a throttle counts a source address by.
func sourceKey(a netip.Addr) netip.Addr {
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.Addr()
	}
	return a
}

// next is where b's full goes with one more failure at now, and whether
// that failure is within the burst.
func (t *Throttle) next(b bucket, now time.Time) (time.Time, bool) {
	iv := time.Minute / time.Duration(t.lim.PerMinute)
	d := max(b.full.Sub(now), 0) + iv
	return now.Add(d), d <= time.Duration(t.lim.Burst)*iv
}

// Fail charges a failure to a at now. It reports whether the failure is
// within a's limit (answer it); false: over it (drop the answer, and
// charge nothing: that would only delay the refill).
func (t *Throttle) Fail(a netip.Addr, now time.Time) bool {
	k := sourceKey(a)
	t.mu.Lock()
	defer t.mu.Unlock()
	b, ok := t.m[k]
	if !ok {
		t.makeRoom(now)
	}
	full, within := t.next(b, now)
	if within {
		t.m[k] = bucket{full: full}
	}
	return within
}

// Spent reports whether a has no failure left at now: its requests that
// would succeed are dropped too, or a guesser would learn the right
// password from the one answer it gets.
func (t *Throttle) Spent(a netip.Addr, now time.Time) bool {
	k := sourceKey(a)
	t.mu.Lock()
	defer t.mu.Unlock()
	b, ok := t.m[k]
	_, within := t.next(b, now)
	return ok && !within
}

// Len is the number of sources remembered.
func (t *Throttle) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// makeRoom frees buckets when the table is full; t.mu is held.
func (t *Throttle) makeRoom(now time.Time) {
	if len(t.m) < t.lim.Sources {
		return
	}
	for k, b := range t.m {
		if !b.full.After(now) { // full again
			delete(t.m, k)
		}
	}
	target := t.lim.Sources - max(t.lim.Sources/8, 1)
	for k := range t.m {
		if len(t.m) <= target {
			break
		}
		delete(t.m, k)
	}
}
