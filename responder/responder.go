package responder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/snmpreq"
	"github.com/perfagent/subagent/usm"
)

var errTooBigToAnswer = errors.New("even a tooBig response exceeds the size limit")

// Responder is the standalone SNMP agent. Create it with New, serve with Run.
type Responder struct {
	cfg  Config       // as given to New; live holds the current settings
	addr *net.UDPAddr // resolved listen address
	live atomic.Pointer[settings]
	// moments: the views, walks (by the manager's address) and data ages.
	moments snmpreq.Moments[netip.AddrPort]
	walks   asn1tree.Walks[netip.AddrPort]
	log     *slog.Logger
	stats   Stats
	start   time.Time        // sysUpTime counts from here
	now     func() time.Time // time.Now; tests set a clock

	engine *engine // SNMPv3; nil without Config.V3
	// fails and discoveries throttle the SNMPv3 failures of each source
	// (Config.AuthFailures, Config.Discoveries).
	fails, discoveries *usm.Throttle

	running atomic.Bool
	pre     atomic.Pointer[net.UDPConn] // bound by Bind, taken by Run
	bound   atomic.Pointer[net.UDPAddr]
	ready   chan struct{}
	once    sync.Once
}

// New checks cfg and prepares a responder that answers each request
// from view(); nothing is bound until Run. view must be safe for
// concurrent use. Without moments to go back to, the requests of one walk
// may see different snapshots: NewWithSource keeps walks consistent.
func New(cfg Config, view func() asn1tree.View, log *slog.Logger) (*Responder, error) {
	if view == nil {
		return nil, errors.New("responder: no view function")
	}
	return NewWithSource(cfg, asn1tree.Latest(view), log)
}

// NewWithSource is New answering from src: each request from src(nil),
// except that a GetNext or GetBulk that continues a walk of the same
// manager (asn1tree.Walks) is answered from the moment the walk started
// at. src is called once per request and must be safe for concurrent use.
func NewWithSource(cfg Config, src asn1tree.Source, log *slog.Logger) (*Responder, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("responder: %w", err)
	}
	if src == nil {
		return nil, errors.New("responder: no view source")
	}
	addr, err := resolveListen(cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("responder: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Responder{
		cfg: cfg, addr: addr, start: time.Now(), now: time.Now,
		log: log.With("component", "responder"), ready: make(chan struct{}),
	}
	set, err := newSettings(cfg)
	if err != nil {
		return nil, fmt.Errorf("responder: %w", err)
	}
	r.moments = snmpreq.Moments[netip.AddrPort]{Src: src, Walks: &r.walks, Ages: &r.stats.DataAge}
	r.live.Store(set)
	if cfg.V3 != nil {
		r.engine = newEngine(cfg.V3)
	}
	r.fails, r.discoveries = usm.NewThrottle(cfg.AuthFailures), usm.NewThrottle(cfg.Discoveries)
	r.walks.Budget, r.walks.Shared, r.stats.walks = cfg.WalkBudget, cfg.SharedWalks, &r.walks
	return r, nil
}

// settings are what Update may change while the responder runs; each
// request loads them once, so it sees the old or the new ones whole.
type settings struct {
	community      []byte           // nil: v1 and v2c off
	users          map[string]*user // v3; nil without V3
	maxRepetitions int
	maxMsgSize     int
	sys            *asn1tree.Tree[asn1tree.Value] // the system group; nil: none
}

func newSettings(c Config) (*settings, error) {
	s := &settings{maxRepetitions: c.MaxRepetitions, maxMsgSize: c.MaxMsgSize}
	if c.Community != "" {
		s.community = []byte(c.Community)
	}
	if c.V3 != nil {
		u, err := c.V3.users()
		if err != nil {
			return nil, err
		}
		s.users = u
	}
	if c.System != nil {
		t, err := asn1tree.Build(c.System.entries())
		if err != nil {
			return nil, err
		}
		s.sys = t
	}
	return s, nil
}

// Check tells whether Update would take cfg. The engine (V3's EngineID
// and Boots) is the one New was given; Update cannot change it.
func Check(cfg Config) error {
	_, err := cfg.withDefaults()
	return err
}

// Update replaces the community, the v3 users, MaxRepetitions, MaxMsgSize
// and the system group from the next request on, all at once, without rebinding: after it
// returns, the old community is refused. cfg.Listen is ignored (the
// socket stays); sysUpTime goes on counting.
func (r *Responder) Update(cfg Config) error {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return fmt.Errorf("responder: %w", err)
	}
	if err := r.sameEngine(cfg.V3); err != nil {
		return fmt.Errorf("responder: %w", err)
	}
	set, err := newSettings(cfg)
	if err != nil {
		return fmt.Errorf("responder: %w", err)
	}
	r.live.Store(set)
	return nil
}

// Name names the front end in the daemon's logs.
func (r *Responder) Name() string { return "responder" }

// Stats returns the live counters.
func (r *Responder) Stats() *Stats { return &r.stats }

// Addr is the bound address once Ready is closed; nil before or on failure.
func (r *Responder) Addr() net.Addr {
	if a := r.bound.Load(); a != nil {
		return a
	}
	return nil
}

// Ready is closed when Run has bound its socket or has failed to.
func (r *Responder) Ready() <-chan struct{} { return r.ready }

// Bind binds the socket before Run, which then answers on it: a daemon
// refuses to start on an address that cannot be bound before it counts
// the start. release closes the socket unless Run has taken it.
func (r *Responder) Bind() (release func(), err error) {
	conn, err := r.listen()
	if err != nil {
		return nil, err
	}
	if !r.pre.CompareAndSwap(nil, conn) {
		conn.Close()
		return nil, errors.New("Bind called twice")
	}
	return func() {
		if r.pre.CompareAndSwap(conn, nil) {
			conn.Close()
		}
	}, nil
}

func (r *Responder) listen() (*net.UDPConn, error) {
	conn, err := net.ListenUDP("udp", r.addr)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: %w", r.cfg.Listen, err)
	}
	return conn, nil
}

// Run binds the socket (unless Bind did) and answers requests until ctx
// is done; it then closes the socket and returns nil. A Responder runs
// once. Its errors, and Bind's, do not name the responder: the daemon
// names each part it runs (Name).
func (r *Responder) Run(ctx context.Context) error {
	defer r.once.Do(func() { close(r.ready) })
	if !r.running.CompareAndSwap(false, true) {
		return errors.New("Run called twice")
	}
	conn := r.pre.Swap(nil)
	if conn == nil {
		var err error
		if conn, err = r.listen(); err != nil {
			return err
		}
	}
	defer conn.Close()
	r.bound.Store(conn.LocalAddr().(*net.UDPAddr))
	r.once.Do(func() { close(r.ready) })
	r.log.Info("serving SNMP", "address", conn.LocalAddr().String(), "versions", r.versions())
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	return r.serve(ctx, conn)
}

// serve is the read loop: one goroutine, one buffer, one scratch; the
// socket read and written with raw calls (rawUDP).
func (r *Responder) serve(ctx context.Context, conn *net.UDPConn) error {
	u, err := newRawUDP(conn)
	if err != nil {
		return err
	}
	buf := make([]byte, 65536) // the largest UDP payload fits
	var s scratch
	for {
		n, from, err := u.read(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("read: %w", err)
		}
		s.from = from
		out := r.handle(buf[:n], &s)
		if out == nil {
			if r.log.Enabled(ctx, slog.LevelDebug) {
				r.log.Debug("request dropped", "from", from.String(), "reason", s.why.Error())
			}
			continue
		}
		if err := u.reply(out); err != nil {
			r.stats.SendErrors.Add(1)
			if r.log.Enabled(ctx, slog.LevelDebug) {
				r.log.Debug("response not sent", "to", from.String(), "err", err)
			}
		}
	}
}
