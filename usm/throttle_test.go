package usm

import (
	"net/netip"
	"strings"
	"testing"
	"time"
)

// A source gets its burst at once, then PerMinute a minute; another
// source is not slowed; the refill stops at the burst.
func TestThrottleRatePerSource(t *testing.T) {
	th := NewThrottle(Limits{PerMinute: 30, Burst: 10, Sources: 64})
	a, b := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")
	now := time.Unix(1000, 0)
	count := func(src netip.Addr, n int) int {
		ok := 0
		for range n {
			if th.Fail(src, now) {
				ok++
			}
		}
		return ok
	}
	if got := count(a, 1000); got != 10 {
		t.Fatalf("burst: %d failures answered at once, want 10", got)
	}
	if !th.Spent(a, now) || th.Spent(b, now) {
		t.Fatalf("spent: a %v (want true), b %v (want false)", th.Spent(a, now), th.Spent(b, now))
	}
	if got := count(b, 5); got != 5 {
		t.Errorf("another source: %d of 5 answered", got)
	}
	// 30 a minute: one every 2 s.
	now = now.Add(1900 * time.Millisecond)
	if got := count(a, 100); got != 0 {
		t.Errorf("after 1.9 s: %d answered, want 0", got)
	}
	now = now.Add(100 * time.Millisecond)
	if got := count(a, 100); got != 1 {
		t.Errorf("after 2 s: %d answered, want 1", got)
	}
	for range 60 { // a minute of flooding: 30 answered
		now = now.Add(time.Second)
		count(a, 50)
	}
	now = now.Add(time.Hour)
	if th.Spent(a, now) {
		t.Error("an hour later a is still spent")
	}
	if got := count(a, 100); got != 10 {
		t.Errorf("an hour later: %d answered, want the burst (10), no more", got)
	}
}

// Over a minute of flooding, the answers are the burst plus the rate.
func TestThrottleFloodMinute(t *testing.T) {
	th := NewThrottle(Limits{PerMinute: 30, Burst: 10, Sources: 64})
	a := netip.MustParseAddr("192.0.2.7")
	now, ok := time.Unix(0, 0), 0
	for range 60001 { // 1000 a second, from 1 ms to 60.001 s
		now = now.Add(time.Millisecond)
		if th.Fail(a, now) {
			ok++
		}
	}
	if ok != 10+30 {
		t.Errorf("%d failures answered in a minute of 60000, want 40", ok)
	}
}

// An IPv6 host's /64 is one source; IPv4-mapped addresses are IPv4.
func TestThrottleSourceKeys(t *testing.T) {
	th := NewThrottle(Limits{PerMinute: 1, Burst: 1, Sources: 64})
	now := time.Unix(0, 0)
	if !th.Fail(netip.MustParseAddr("2001:db8::1"), now) || th.Fail(netip.MustParseAddr("2001:db8::ffff:2"), now) {
		t.Error("two addresses of one /64 got two bursts")
	}
	if !th.Fail(netip.MustParseAddr("2001:db8:0:1::1"), now) {
		t.Error("another /64 was throttled")
	}
	if !th.Fail(netip.MustParseAddr("10.0.0.1"), now) || th.Fail(netip.MustParseAddr("::ffff:10.0.0.1"), now) {
		t.Error("an IPv4-mapped address is another source")
	}
}

// The table stays within Sources, and buckets full again go first.
func TestThrottleTableBounded(t *testing.T) {
	th := NewThrottle(Limits{PerMinute: 60, Burst: 2, Sources: 64})
	now := time.Unix(0, 0)
	for i := range 10000 {
		a := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		th.Fail(a, now)
		if n := th.Len(); n > 64 {
			t.Fatalf("%d sources remembered, more than 64", n)
		}
		now = now.Add(10 * time.Millisecond) // the others refill in 1 s
	}
	for i := th.Len(); i < 64; i++ { // full
		th.Fail(netip.AddrFrom4([4]byte{172, 16, 0, byte(i)}), now)
	}
	// 100 s later every one is full again: one insert drops them all.
	th.Fail(netip.MustParseAddr("203.0.113.1"), now.Add(100*time.Second))
	if n := th.Len(); n != 1 {
		t.Errorf("%d sources remembered after all refilled, want 1", n)
	}
}

func TestLimitsCheck(t *testing.T) {
	if err := DefaultFailureLimits.Check(); err != nil {
		t.Error(err)
	}
	if err := DefaultDiscoveryLimits.Check(); err != nil {
		t.Error(err)
	}
	for _, c := range []struct {
		l    Limits
		want string
	}{
		{Limits{PerMinute: 0, Burst: 1, Sources: 16}, "per_minute: 0"},
		{Limits{PerMinute: 1, Burst: MaxBurst + 1, Sources: 16}, "burst: 10001"},
		{Limits{PerMinute: 1, Burst: 1, Sources: 15}, "sources: 15"},
	} {
		if err := c.l.Check(); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q...", c.l, err, c.want)
		}
	}
	if got := (Limits{Burst: 3}).WithDefaults(DefaultFailureLimits); got != (Limits{PerMinute: 30, Burst: 3, Sources: 4096}) {
		t.Errorf("WithDefaults: %+v", got)
	}
}
