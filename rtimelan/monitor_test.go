package rtimelan

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfagent/subagent/spmi"
)

type packet struct {
	v6   bool
	b    []byte
	from netip.Addr
}

// fakeNet answers echo requests to the addresses in up, after delay, and
// can deliver any packet the test makes.
type fakeNet struct {
	t     testing.TB
	up    map[netip.Addr]bool
	delay time.Duration
	in    chan packet
	done  chan struct{}
	once  sync.Once
	mu    sync.Mutex
	sent  map[netip.Addr]int
}

func newFakeNet(t testing.TB, up ...netip.Addr) *fakeNet {
	f := &fakeNet{t: t, up: map[netip.Addr]bool{}, in: make(chan packet, 1000), done: make(chan struct{}), sent: map[netip.Addr]int{}}
	for _, a := range up {
		f.up[a] = true
	}
	return f
}

func (f *fakeNet) Has(netip.Addr) bool { return true }
func (f *fakeNet) ID(v6 bool) uint16   { return 7 }
func (f *fakeNet) Send(a netip.Addr, seq uint16, data []byte) error {
	f.mu.Lock()
	f.sent[a]++
	f.mu.Unlock()
	if f.up[a] {
		p := packet{a.Is6(), echo(f.t, a.Is6(), true, 7, seq, data), a}
		time.AfterFunc(f.delay, func() {
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

// until polls cond for up to 5 s.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
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

func TestMonitorMeasuresAnsweringAndSilentHosts(t *testing.T) {
	up := netip.MustParseAddr("192.0.2.1")
	fn := newFakeNet(t, up)
	fn.delay = 2 * time.Millisecond
	var logs syncBuf
	m := NewMonitor(settings("192.0.2.1", "192.0.2.2", "no-such-host.invalid"), newStore(t), fn, nil,
		slog.New(slog.NewTextHandler(&logs, nil)))
	m.resolve = func(ctx context.Context, h string) ([]netip.Addr, error) {
		return nil, errors.New("no such host")
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	until(t, "five answers and five unanswered requests", func() bool {
		a, _ := statsOf(m, "192.0.2.1")
		s, _ := statsOf(m, "192.0.2.2")
		u, _ := statsOf(m, "no-such-host.invalid")
		return a.Responses >= 5 && s.Requests >= 5 && u.Requests >= 5
	})
	cancel()
	<-done
	a, _ := statsOf(m, "192.0.2.1")
	s, _ := statsOf(m, "192.0.2.2")
	u, _ := statsOf(m, "no-such-host.invalid")
	if a.Responses > a.Requests || a.Avg < 1 || a.BandPercent(0) != 100 {
		t.Errorf("answering host: %+v", a)
	}
	if s.Responses != 0 || u.Responses != 0 {
		t.Errorf("silent hosts answered: %+v %+v", s, u)
	}
	if n := strings.Count(logs.String(), "cannot resolve"); n != 1 {
		t.Errorf("resolution failure logged %d times, want once:\n%s", n, logs.String())
	}
	if fn.sent[netip.MustParseAddr("192.0.2.2")] == 0 {
		t.Error("nothing sent to the silent host")
	}
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
