package rtimelan

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/spmi"
)

type packet struct {
	v6   bool
	b    []byte
	from netip.Addr
}

// fakeNet answers echo requests to the addresses in up after their delay,
// and can deliver any packet the test makes. In a synctest bubble its
// delays and the times it records run on the bubble's clock.
type fakeNet struct {
	t     testing.TB
	delay time.Duration // of addresses without their own
	in    chan packet
	done  chan struct{}
	once  sync.Once
	mu    sync.Mutex
	up    map[netip.Addr]time.Duration // address: its reply's delay (<0: delay)
	sent  map[netip.Addr][]time.Time
}

func newFakeNet(t testing.TB, up ...netip.Addr) *fakeNet {
	f := &fakeNet{t: t, up: map[netip.Addr]time.Duration{}, in: make(chan packet, 1000), done: make(chan struct{}), sent: map[netip.Addr][]time.Time{}}
	for _, a := range up {
		f.up[a] = -1
	}
	return f
}

// answer makes a answer after d.
func (f *fakeNet) answer(a netip.Addr, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.up[a] = d
}

// sends returns when each request to a was sent.
func (f *fakeNet) sends(a netip.Addr) []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.sent[a]...)
}

func (f *fakeNet) Has(netip.Addr) bool { return true }
func (f *fakeNet) ID(v6 bool) uint16   { return 7 }
func (f *fakeNet) Send(a netip.Addr, seq uint16, data []byte) error {
	f.mu.Lock()
	f.sent[a] = append(f.sent[a], time.Now())
	d, up := f.up[a]
	f.mu.Unlock()
	if up {
		if d < 0 {
			d = f.delay
		}
		p := packet{a.Is6(), echo(f.t, a.Is6(), true, 7, seq, data), a}
		time.AfterFunc(d, func() {
			select {
			case f.in <- p:
			case <-f.done:
			}
		})
	}
	return nil
}
func (f *fakeNet) Receive(fn func(bool, []byte, netip.Addr, time.Time)) {
	for {
		select {
		case p := <-f.in:
			fn(p.v6, p.b, p.from, time.Now())
		case <-f.done:
			return
		}
	}
}
func (f *fakeNet) Close() error { f.once.Do(func() { close(f.done) }); return nil }

func settings(hosts ...string) Settings {
	return Settings{Interval: 20 * time.Millisecond, MaxRate: 1000, Weight: 75, Timeout: 100 * time.Millisecond,
		Hosts: hosts, ByReference: true, MaxHosts: 5}
}

func newStore(t *testing.T) *Store {
	s, err := OpenStore(spmi.NewNumbering(filepath.Join(t.TempDir(), "numbering.json")))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func statsOf(m *Monitor, name string) (Stats, bool) {
	_, hs := m.view()
	for _, h := range hs {
		if h.name == name {
			return h.stats, true
		}
	}
	return Stats{}, false
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// runMonitor runs m until the test ends (a cleanup stops it).
func runMonitor(t *testing.T, m *Monitor) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

var errNoSuchHost = errors.New("lookup no-such-host.invalid: no such host")

// On the bubble's clock: five cycles of 1 s give each host exactly five
// requests, one third of the interval apart; the answering host's round
// trip is its 2 ms delay exactly; the name that does not resolve counts
// requests without responses and is logged once.
func TestMonitorMeasuresAnsweringAndSilentHosts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		up, silent := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2")
		fn := newFakeNet(t, up)
		fn.delay = 2 * time.Millisecond
		var logs syncBuf
		s := settings("192.0.2.1", "192.0.2.2", "no-such-host.invalid")
		s.Interval, s.Timeout = time.Second, 500*time.Millisecond
		m := NewMonitor(s, newStore(t), fn, nil, slog.New(slog.NewTextHandler(&logs, nil)))
		var lookups atomic.Int32
		m.resolve = func(ctx context.Context, h string) ([]netip.Addr, error) {
			lookups.Add(1)
			return nil, errNoSuchHost
		}
		begin := time.Now()
		runMonitor(t, m)
		time.Sleep(5*s.Interval - time.Nanosecond)
		synctest.Wait()

		a, _ := statsOf(m, "192.0.2.1")
		q, _ := statsOf(m, "192.0.2.2")
		u, _ := statsOf(m, "no-such-host.invalid")
		if a.Requests != 5 || a.Responses != 5 || a.Avg != 2 || a.Last != 2*time.Millisecond || a.BandPercent(0) != 100 {
			t.Errorf("answering host: %+v, want 5 requests answered in 2 ms", a)
		}
		if q.Requests != 5 || q.Responses != 0 || u.Requests != 5 || u.Responses != 0 || lookups.Load() != 5 {
			t.Errorf("silent host %+v, unresolvable one %+v after %d lookups: want 5 requests each, no response", q, u, lookups.Load())
		}
		// A cycle goes in number order, one third of the interval apart.
		third := s.Interval / 3
		slot := time.Duration(slices.Index(m.Hosts(), "192.0.2.2"))
		if sends := fn.sends(silent); len(sends) != 5 {
			t.Errorf("%d requests to the silent host, want 5", len(sends))
		}
		for k, at := range fn.sends(silent) {
			if want := time.Duration(k)*s.Interval + slot*third; at.Sub(begin) != want {
				t.Errorf("request %d to the silent host at %v, want %v", k+1, at.Sub(begin), want)
			}
		}
		if c, _ := m.view(); c.Cycles != 5 || c.Skipped != 0 || c.Late != 0 {
			t.Errorf("counts %+v, want 5 cycles, none skipped, no late reply", c)
		}
		if n := strings.Count(logs.String(), "cannot resolve"); n != 1 {
			t.Errorf("resolution failure logged %d times, want once:\n%s", n, logs.String())
		}
	})
}

// A reply counts as a response when it comes within the timeout, exactly
// at it included; one later is late, whether or not Run gave its request
// up yet.
func TestMonitorTimeoutOnTheClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fn := newFakeNet(t)
		s := settings("192.0.2.1")
		s.Interval, s.Timeout = 10*time.Second, time.Second
		m := NewMonitor(s, newStore(t), fn, nil, nil)
		a := netip.MustParseAddr("192.0.2.1")
		cases := []struct {
			delay      time.Duration
			responses  uint64
			late, dupl uint64
		}{
			{s.Timeout, 1, 0, 0},                   // at the timeout
			{s.Timeout + time.Nanosecond, 1, 1, 0}, // before Run's next pass gives it up
			{5 * s.Timeout, 1, 2, 0},               // long given up
		}
		fn.answer(a, cases[0].delay)
		begin := time.Now()
		runMonitor(t, m)
		for i, tc := range cases {
			// Until just before the next cycle's request.
			time.Sleep(time.Until(begin.Add(time.Duration(i+1)*s.Interval - time.Nanosecond)))
			synctest.Wait()
			if i+1 < len(cases) {
				fn.answer(a, cases[i+1].delay)
			}
			st, _ := statsOf(m, "192.0.2.1")
			c, _ := m.view()
			if st.Requests != uint64(i+1) || st.Responses != tc.responses || c.Late != tc.late || c.Duplicate != tc.dupl {
				t.Errorf("reply after %v: %d requests, %d responses, %d late, %d duplicate; want %d, %d, %d, %d",
					tc.delay, st.Requests, st.Responses, c.Late, c.Duplicate, i+1, tc.responses, tc.late, tc.dupl)
			}
		}
		if st, _ := statsOf(m, "192.0.2.1"); st.Last != s.Timeout {
			t.Errorf("round trip %v, want %v", st.Last, s.Timeout)
		}
	})
}

// Requests are spread over the interval but never closer than 1/maxrate:
// three hosts at 2 per second take 1 s, so a 1 s interval skips every
// other tick. Exact on the bubble's clock.
func TestMonitorRateLimitOnTheClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hosts := []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"}
		fn := newFakeNet(t)
		s := settings(hosts...)
		s.Interval, s.MaxRate, s.Timeout = time.Second, 2, 500*time.Millisecond
		m := NewMonitor(s, newStore(t), fn, nil, nil)
		begin := time.Now()
		runMonitor(t, m)
		time.Sleep(4*s.Interval - time.Nanosecond)
		synctest.Wait()
		ms := time.Millisecond
		for i, h := range m.Hosts() { // a cycle goes in number order
			var got []time.Duration
			for _, at := range fn.sends(netip.MustParseAddr(h)) {
				got = append(got, at.Sub(begin))
			}
			// Cycles start at 0 and 2 s; within one, 500 ms apart.
			want := []time.Duration{time.Duration(i) * 500 * ms, 2*time.Second + time.Duration(i)*500*ms}
			if !slices.Equal(got, want) {
				t.Errorf("%s: requests at %v, want %v", h, got, want)
			}
		}
		if c, _ := m.view(); c.Cycles != 2 || c.Skipped != 2 {
			t.Errorf("cycles %d, skipped %d; want 2 and 2 (the ticks at 1 s and 3 s)", c.Cycles, c.Skipped)
		}
	})
}

// A name that does not resolve is not measured, and what is served for
// it says why: the resolver's error, not "no echo reply". A silent
// address says no reply; an answering one needs no reason.
func TestUnresolvableHostSaysWhy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fn := newFakeNet(t, netip.MustParseAddr("192.0.2.1"))
		m := NewMonitor(settings("192.0.2.1", "192.0.2.2", "no-such-host.invalid"), newStore(t), fn, nil, nil)
		m.resolve = func(context.Context, string) ([]netip.Addr, error) { return nil, errNoSuchHost }
		p := Provider{M: m}
		// why is the reason served for path's missing value, if any.
		why := func(path string) (string, bool) {
			b := spmi.NewBuilder(asn1tree.MustParse("1.3.6.1.4.1.32473.1"), nil, time.Now())
			if err := p.Collect(b); err != nil {
				t.Fatal(err)
			}
			it := b.Finish().Answer().Item(path)
			if it.Err == nil || it.Err.Code != spmierr.SiNoValue {
				return "", false
			}
			return it.Err.Msg, true
		}
		if why, ok := why("RTime/LAN/no-such-host.invalid/resptime"); !ok || !strings.Contains(why, "no echo reply") {
			t.Errorf("before any request: %q %v, want no echo reply so far", why, ok)
		}
		runMonitor(t, m)
		time.Sleep(settings().Interval)
		synctest.Wait()
		for path, want := range map[string]string{
			"RTime/LAN/no-such-host.invalid/resptime": "not measured yet: cannot resolve no-such-host.invalid: " + errNoSuchHost.Error(),
			"RTime/LAN/no-such-host.invalid/respavg":  "not measured yet: cannot resolve no-such-host.invalid: " + errNoSuchHost.Error(),
			"RTime/LAN/192.0.2.2/resptime":            "not measured yet: no echo reply from 192.0.2.2 so far",
		} {
			if why, ok := why(path); !ok || why != want {
				t.Errorf("%s: %q %v, want %q", path, why, ok, want)
			}
		}
		for _, path := range []string{"RTime/LAN/192.0.2.1/resptime", "RTime/LAN/no-such-host.invalid/requests"} {
			if why, ok := why(path); ok {
				t.Errorf("%s: %q, want no reason (it has a value, or is not a host's)", path, why)
			}
		}
		if u, _ := statsOf(m, "no-such-host.invalid"); u.Requests == 0 {
			t.Error("the unresolvable host's requests did not count")
		}
	})
}

func TestMonitorCountsStrayReplies(t *testing.T) {
	fn := newFakeNet(t)
	m := NewMonitor(settings(), newStore(t), fn, nil, nil)
	t0 := time.Now()
	a := netip.MustParseAddr("192.0.2.1")
	m.Apply(settings("192.0.2.1"))
	m.mu.Lock()
	seq := m.match.Next("192.0.2.1", a, t0)
	old := m.match.Next("192.0.2.1", a, t0.Add(-time.Minute))
	m.match.Expire(t0.Add(-time.Second), t0)
	m.mu.Unlock()
	p := m.match.Payload()
	m.Handle(false, echo(t, false, true, 7, seq, p), a, t0.Add(time.Millisecond))
	m.Handle(false, echo(t, false, true, 7, seq, p), a, t0.Add(time.Millisecond))
	m.Handle(false, echo(t, false, true, 7, old, p), a, t0.Add(time.Millisecond))
	m.Handle(false, echo(t, false, true, 99, seq, p), a, t0.Add(time.Millisecond))          // another program's
	m.Handle(false, echo(t, false, true, 7, seq+100, p), a, t0.Add(time.Millisecond))       // ours, no such request
	m.Handle(false, echo(t, false, true, 7, seq, []byte("x")), a, t0.Add(time.Millisecond)) // ours, other payload
	c, _ := m.view()
	if c.Duplicate != 1 || c.Late != 1 || c.Foreign != 2 {
		t.Errorf("duplicate %d late %d foreign %d, want 1, 1 and 2", c.Duplicate, c.Late, c.Foreign)
	}
	if s, _ := statsOf(m, "192.0.2.1"); s.Responses != 1 {
		t.Errorf("responses %d, want 1", s.Responses)
	}
}

func TestMonitorCreateRemoveRefuse(t *testing.T) {
	store := newStore(t)
	m := NewMonitor(settings("gw"), store, newFakeNet(t), nil, nil)
	if ok, err := m.Create("farvel"); !ok || err != nil {
		t.Fatalf("create farvel: %v %v", ok, err)
	}
	if ok, err := m.Create("farvel"); ok || err != nil {
		t.Errorf("create again: %v %v, want false", ok, err)
	}
	if _, err := m.Create("a b"); err == nil {
		t.Error("bad name created")
	}
	num, err := spmi.LoadNumbering(store.num.File())
	if err != nil {
		t.Fatal(err)
	}
	reloaded, err := OpenStore(num)
	if k, _ := reloaded.Lookup("farvel"); err != nil || !reloaded.IsReferenced("farvel") || k != FirstHostASN+1 {
		t.Fatalf("farvel not persisted: %d %v %v", k, reloaded.Referenced(), err)
	}
	if err := m.Remove("gw"); err == nil || !strings.Contains(err.Error(), "rtime_lan.hosts") {
		t.Errorf("removing a configured host: %v", err)
	}
	if err := m.Remove("farvel"); err != nil {
		t.Fatal(err)
	}
	if err := m.Remove("farvel"); err == nil {
		t.Error("removed twice")
	}
	if got := m.Hosts(); len(got) != 1 || got[0] != "gw" {
		t.Errorf("hosts %v, want [gw]", got)
	}
	// Created again, it gets its old number back.
	m.Create("farvel")
	if k, _ := store.Lookup("farvel"); k != FirstHostASN+1 {
		t.Errorf("farvel renumbered %d", k)
	}
	s := settings("gw")
	s.Refuse = []string{"FARVEL"}
	m.Apply(s)
	if _, err := m.Create("farvel"); err == nil || !strings.Contains(err.Error(), "refuse") {
		t.Errorf("refused host: %v", err)
	}
	if store.IsReferenced("farvel") || len(m.Hosts()) != 1 {
		t.Errorf("refused host still measured: %v", m.Hosts())
	}
	s.Refuse, s.ByReference = nil, false
	m.Apply(s)
	if _, err := m.Create("x"); err == nil || !strings.Contains(err.Error(), "by_reference") {
		t.Errorf("by_reference off: %v", err)
	}
	s.ByReference, s.MaxHosts = true, 2
	m.Apply(s)
	m.Create("x")
	if _, err := m.Create("y"); err == nil || !strings.Contains(err.Error(), "max_hosts") {
		t.Errorf("beyond max_hosts: %v", err)
	}
}

func TestMonitorApplyKeepsStatisticsOfStayingHosts(t *testing.T) {
	m := NewMonitor(settings("a", "b"), newStore(t), newFakeNet(t), nil, nil)
	m.mu.Lock()
	m.hosts["a"].stats.Observe(time.Millisecond, 75)
	m.mu.Unlock()
	m.Apply(settings("a", "c"))
	if got := strings.Join(m.Hosts(), " "); got != "a c" {
		t.Errorf("hosts %q, want a c (numbers 16, 18)", got)
	}
	if s, _ := statsOf(m, "a"); s.Responses != 1 {
		t.Error("a lost its statistics")
	}
	if err := Check(settings("a", "a")); err == nil {
		t.Error("duplicate hosts accepted")
	}
}
