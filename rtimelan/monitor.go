package rtimelan

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"
)

// Settings are the operator's choices (the rtime_lan section).
type Settings struct {
	Interval    time.Duration
	MaxRate     int // requests per second, all hosts together
	Weight      int // percent the previous average keeps
	Timeout     time.Duration
	Hosts       []string // configured hosts
	ByReference bool     // a reference by path creates a host
	MaxHosts    int
	Refuse      []string // never created by reference; dropped when they were
}

// Transport sends echo requests and delivers replies: the Pinger, or a
// fake in tests.
type Transport interface {
	Has(addr netip.Addr) bool
	ID(v6 bool) uint16
	Send(addr netip.Addr, seq uint16, data []byte) error
	// Receive calls fn for every packet until Close.
	Receive(fn func(v6 bool, b []byte, from netip.Addr, at time.Time))
	Close() error
}

// Clock is the time the monitor runs on.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// resolveTTL is how long a resolved address is used before it is asked
// for again; resolveTimeout bounds one lookup.
const (
	resolveTTL     = time.Minute
	resolveTimeout = 2 * time.Second
)

type host struct {
	name, host string
	asn        uint32
	configured bool
	volatile   bool // created over SNMP, not kept: a reload keeps it, a restart does not
	stats      Stats
	addr       netip.Addr
	resolvedAt time.Time
	resolving  bool
	problem    string // the last resolution or send error, logged once per change
}

// Counts are the monitor's own statistics.
type Counts struct {
	Hosts                    int
	Cycles, Skipped          uint64
	Late, Duplicate, Foreign uint64
}

// Monitor measures the response time of its hosts.
type Monitor struct {
	tr    Transport
	clock Clock
	log   *slog.Logger
	kick  chan struct{}

	// change serialises the changes of the host set (Apply, create,
	// Remove), each with its save: saves happen in the order of the
	// changes. It is held across the save (disk I/O, fsync), which mu,
	// which every reply and every read takes, never is.
	change sync.Mutex
	save   func() error // store.Save; a seam for tests

	mu        sync.Mutex
	set       Settings
	store     *Store
	hosts     map[string]*host // by instance name
	sched     *Scheduler
	match     *Matcher
	counts    Counts
	resolve   func(ctx context.Context, host string) ([]netip.Addr, error)
	resolvers sync.WaitGroup
}

// NewMonitor returns a monitor of the hosts of s and store; nothing is
// sent before Run. clock may be nil (the real clock).
func NewMonitor(s Settings, store *Store, tr Transport, clock Clock, log *slog.Logger) *Monitor {
	if clock == nil {
		clock = realClock{}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	nonce := make([]byte, 16)
	rand.Read(nonce)
	copy(nonce, "RTime/LAN")
	m := &Monitor{
		tr: tr, clock: clock, log: log, kick: make(chan struct{}, 1),
		store: store, hosts: map[string]*host{}, sched: NewScheduler(s.Interval, s.MaxRate),
		match: NewMatcher(nonce, 2*time.Minute), save: store.Save,
		resolve: func(ctx context.Context, h string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", h)
		},
	}
	m.Apply(s)
	return m
}

// Check tells whether s can be applied.
func Check(s Settings) error {
	names := map[string]string{}
	for _, h := range s.Hosts {
		if err := CheckHost(h); err != nil {
			return err
		}
		n := InstanceName(h)
		if o, dup := names[n]; dup {
			return fmt.Errorf("hosts %q and %q both become RTime/LAN/%s", o, h, n)
		}
		names[n] = h
	}
	if len(s.Hosts) > s.MaxHosts {
		return fmt.Errorf("%d hosts configured, more than max_hosts %d", len(s.Hosts), s.MaxHosts)
	}
	return nil
}

func refused(s Settings, name string) bool {
	return slices.ContainsFunc(s.Refuse, func(r string) bool { return strings.EqualFold(InstanceName(r), name) })
}

// Apply takes new settings: the scheduler's interval and rate from the
// next cycle on, the weight from the next reply, and the host list at
// once. Hosts that stay keep their statistics.
func (m *Monitor) Apply(s Settings) {
	m.change.Lock()
	defer m.change.Unlock()
	m.applyHosts(s)
	// One save for every change above; none when nothing changed.
	if err := m.save(); err != nil {
		m.log.Error("RTime/LAN: cannot save the hosts; their numbers may change at the next start", "err", err)
	}
	m.wake()
}

// applyHosts is Apply but for the save.
func (m *Monitor) applyHosts(s Settings) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.set = s
	m.sched.Set(s.Interval, s.MaxRate)
	want := map[string]string{}
	configured := map[string]bool{}
	for _, h := range s.Hosts {
		want[InstanceName(h)] = CanonicalHost(h)
		configured[InstanceName(h)] = true
	}
	for _, r := range m.store.Referenced() {
		if refused(s, r) {
			m.store.SetReferenced(r, false)
			m.log.Info("RTime/LAN: host created by reference dropped, it is in rtime_lan.refuse", "host", r)
			continue
		}
		if _, ok := want[r]; !ok {
			want[r] = r
		}
	}
	for name, h := range m.hosts {
		if want[name] != h.host && !(h.volatile && want[name] == "" && !refused(s, name)) {
			delete(m.hosts, name)
		}
	}
	for name, hv := range want {
		if h, ok := m.hosts[name]; ok {
			h.configured = configured[name]
			continue
		}
		k, err := m.store.Number(name)
		if err != nil {
			m.log.Error("RTime/LAN: host not measured", "host", hv, "err", err)
			continue
		}
		m.hosts[name] = &host{name: name, host: hv, asn: k, configured: configured[name]}
	}
}

func (m *Monitor) wake() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// Create starts measuring name, as a reference by path asks: it returns
// false when name is already measured, an error when it may not be. An IP
// address may be written in any form ("[::1]"); its canonical form is
// the instance name.
func (m *Monitor) Create(name string) (bool, error) { return m.create(name, true) }

// CreateVolatile is Create for a host that is not kept across restarts
// (a row a manager created over SNMP with StorageType volatile): its
// number is assigned and kept, the host itself is not.
func (m *Monitor) CreateVolatile(name string) (bool, error) { return m.create(name, false) }

// ErrTooManyHosts is wrapped by Create's error when max_hosts are measured.
var ErrTooManyHosts = errors.New("rtime_lan.max_hosts reached")

// CanCreate tells whether Create(name) would be refused, changing nothing.
func (m *Monitor) CanCreate(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	name = CanonicalHost(name)
	if _, ok := m.hosts[name]; ok {
		return nil
	}
	return m.checkCreateLocked(name)
}

// create measures name once its number (and its mark, when kept) are
// saved; the host set changes only under change, so that what was
// checked holds until the host is added.
func (m *Monitor) create(name string, keep bool) (bool, error) {
	m.change.Lock()
	defer m.change.Unlock()
	name = CanonicalHost(name)
	k, err := m.number(name)
	if err != nil || k == 0 {
		return false, err
	}
	m.store.SetReferenced(name, keep)
	if err := m.save(); err != nil {
		m.store.SetReferenced(name, false)
		return false, fmt.Errorf("cannot add host %q: %w", name, err)
	}
	m.mu.Lock()
	m.hosts[name] = &host{name: name, host: name, asn: k, volatile: !keep}
	m.mu.Unlock()
	m.log.Info("RTime/LAN: measuring a host created by reference", "host", name, "asn", k, "kept", keep)
	return true, nil
}

// number checks that name may be created and gives its number; 0 when
// it is measured already.
func (m *Monitor) number(name string) (uint32, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.hosts[name]; ok {
		return 0, nil
	}
	if err := m.checkCreateLocked(name); err != nil {
		return 0, err
	}
	k, err := m.store.Number(name)
	if err != nil {
		return 0, fmt.Errorf("cannot add host %q: %w", name, err)
	}
	return k, nil
}

func (m *Monitor) checkCreateLocked(name string) error {
	switch {
	case !m.set.ByReference:
		return fmt.Errorf("no host %q, and rtime_lan.by_reference is off", name)
	case refused(m.set, name):
		return fmt.Errorf("host %q is in rtime_lan.refuse", name)
	case len(m.hosts) >= m.set.MaxHosts:
		return fmt.Errorf("cannot add host %q: %d hosts measured, rtime_lan.max_hosts is %d: %w", name, len(m.hosts), m.set.MaxHosts, ErrTooManyHosts)
	}
	if err := CheckHost(name); err != nil {
		return err
	}
	if InstanceName(name) != name {
		// The store keeps referenced hosts by instance name.
		return fmt.Errorf("host %q is longer than %d bytes: list it in rtime_lan.hosts", name, maxName)
	}
	return nil
}

// Remove stops measuring a host created by reference. Its number stays
// reserved for it.
func (m *Monitor) Remove(name string) error {
	m.change.Lock()
	defer m.change.Unlock()
	name = InstanceName(name)
	m.mu.Lock()
	h, ok := m.hosts[name]
	configured := ok && h.configured
	m.mu.Unlock()
	switch {
	case !ok:
		return fmt.Errorf("no host %q under RTime/LAN", name)
	case configured:
		return fmt.Errorf("host %q is in rtime_lan.hosts: remove it there and reload (SIGHUP)", name)
	}
	m.store.SetReferenced(name, false)
	if err := m.save(); err != nil {
		m.store.SetReferenced(name, true)
		return fmt.Errorf("cannot remove host %q: %w", name, err)
	}
	m.mu.Lock()
	delete(m.hosts, name)
	m.mu.Unlock()
	return nil
}

// HostEntry is one measured host as the host table shows it.
type HostEntry struct {
	Name       string // instance name
	ASN        uint32 // its number under RTime/LAN
	Configured bool   // in rtime_lan.hosts
	Kept       bool   // created by reference and kept across restarts
}

// Entries lists the measured hosts, in number order.
func (m *Monitor) Entries() []HostEntry {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]HostEntry, 0, len(m.hosts))
	for _, name := range m.namesLocked() {
		h := m.hosts[name]
		out = append(out, HostEntry{Name: name, ASN: h.asn, Configured: h.configured, Kept: m.store.IsReferenced(name)})
	}
	return out
}

// Hosts lists the instance names measured, in number order.
func (m *Monitor) Hosts() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.namesLocked()
}
