package dds

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/internal/unixsock"
)

// ServerConfig sets up a Server. Zero fields take their defaults.
type ServerConfig struct {
	Socket       string      // socket path (<run dir>/dds.sock)
	Mode         os.FileMode // socket mode, default 0660
	Group        int         // socket group; <= 0 leaves it unchanged
	AllowUIDs    []uint32    // more users allowed besides root and the daemon's
	AllowGIDs    []uint32    // more groups allowed (primary or supplementary)
	StampTimeout time.Duration
	MaxSuppliers int
	// MaxStatsAll bounds the statistics of all suppliers together, and so
	// the daemon's memory (0: DefaultMaxStatsAll).
	MaxStatsAll int
	// MaxStatsPerUID and MaxSuppliersPerUID bound what the suppliers of
	// one user other than root and the daemon's own hold (0: a quarter of
	// MaxStatsAll and MaxSuppliers), so that no local user can take every
	// place; the owners are bounded by the totals only.
	MaxStatsPerUID     int
	MaxSuppliersPerUID int
	// Reserve keeps context names for some users; refusals name an item
	// by its index, as dds.reserve[i].
	Reserve   []Reservation
	IOTimeout time.Duration // to finish a started frame or a reply
	OnChange  func()        // after every change of the served contexts; must not block
	// OnTree is told the contexts (DDS/, DDS/IBM/, DDS/IBM/Test/) that
	// appeared and vanished: every one when the server starts, then at
	// each change, in order; it must not block.
	OnTree func(added, removed []string)
	Limits ddswire.Limits
	Logger *slog.Logger
}

// Stamp timeout bounds and defaults (the guide's 15..600 s, default 30).
const (
	MinStampTimeout     = 15 * time.Second
	MaxStampTimeout     = 600 * time.Second
	DefaultStampTimeout = 30 * time.Second
	DefaultMaxSuppliers = 256
	DefaultMaxStatsAll  = 250000
	DefaultIOTimeout    = 5 * time.Second
)

// Norm fills defaults and checks ranges.
func (c ServerConfig) Norm() (ServerConfig, error) {
	if c.Socket == "" {
		return c, errors.New("dds: no socket path")
	}
	if c.Mode == 0 {
		c.Mode = 0o660
	}
	if c.StampTimeout == 0 {
		c.StampTimeout = DefaultStampTimeout
	}
	if c.StampTimeout < MinStampTimeout || c.StampTimeout > MaxStampTimeout {
		return c, fmt.Errorf("dds: stamp timeout %v, allowed %v..%v", c.StampTimeout, MinStampTimeout, MaxStampTimeout)
	}
	if c.MaxSuppliers <= 0 {
		c.MaxSuppliers = DefaultMaxSuppliers
	}
	if c.MaxStatsAll <= 0 {
		c.MaxStatsAll = DefaultMaxStatsAll
	}
	if c.MaxStatsPerUID == 0 {
		c.MaxStatsPerUID = max(1, c.MaxStatsAll/4)
	}
	if c.MaxSuppliersPerUID == 0 {
		c.MaxSuppliersPerUID = max(1, c.MaxSuppliers/4)
	}
	if n := c.MaxStatsPerUID; n < 0 || n > c.MaxStatsAll {
		return c, fmt.Errorf("dds: statistics per user %d, allowed 1..%d (all suppliers')", n, c.MaxStatsAll)
	}
	if n := c.MaxSuppliersPerUID; n < 0 || n > c.MaxSuppliers {
		return c, fmt.Errorf("dds: suppliers per user %d, allowed 1..%d (all)", n, c.MaxSuppliers)
	}
	if err := CheckReservations(c.Reserve); err != nil {
		return c, err
	}
	if c.IOTimeout <= 0 {
		c.IOTimeout = DefaultIOTimeout
	}
	lim, err := c.Limits.Norm()
	if err != nil {
		return c, err
	}
	c.Limits = lim
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// Server accepts supplier registrations on a Unix socket and keeps the
// registry the Provider serves.
type Server struct {
	cfg     ServerConfig
	log     *slog.Logger
	reg     *registry
	ln      *unixsock.Listener
	refused *unixsock.RefusalLog // registrations over a share or of a reserved name
	timeout time.Duration        // stamp timeout (tests shorten it)
	tick    time.Duration        // liveness check period

	mu     sync.Mutex
	closed bool
	done   chan struct{}
	stop   context.CancelFunc
	wg     sync.WaitGroup
}

// NewServer listens on cfg.Socket (internal/unixsock: a stale socket is
// replaced, a live one or any other file is an error). Serve accepts.
func NewServer(cfg ServerConfig) (*Server, error) {
	cfg, err := cfg.Norm()
	if err != nil {
		return nil, err
	}
	allow := unixsock.Owners().With(cfg.AllowUIDs, cfg.AllowGIDs)
	lim := cfg.Limits
	ln, err := unixsock.Listen(unixsock.Config{
		Name: "dds", Path: cfg.Socket, Mode: cfg.Mode, Group: cfg.Group,
		// Connections that have not registered yet are bounded too.
		MaxConns: 2*cfg.MaxSuppliers + 16,
		Admit: func(p unixsock.Peer) error {
			if allow.Admits(p) {
				return nil
			}
			return spmierr.Errorf(spmierr.SiInitFailed, "uid %d may not register suppliers (dds.allow_uids, dds.allow_gids)", p.UID)
		},
		Refuse: func(c *net.UnixConn, reason string) { refuse(c, reason, lim) },
		Logger: cfg.Logger,
	})
	if err != nil {
		return nil, err
	}
	reg := newRegistry(cfg.MaxSuppliers, cfg.Limits)
	reg.maxAll = cfg.MaxStatsAll
	reg.share.maxStats, reg.share.maxSups = cfg.MaxStatsPerUID, cfg.MaxSuppliersPerUID
	reg.share.reserve = newReservations(cfg.Reserve)
	reg.setOnChange(cfg.OnChange)
	if cfg.OnTree != nil {
		reg.setOnTree(cfg.OnTree)
	}
	reg.log = cfg.Logger
	return &Server{
		cfg: cfg, log: cfg.Logger, reg: reg, refused: unixsock.NewRefusalLog(cfg.Logger),
		ln: ln, timeout: cfg.StampTimeout, tick: time.Second,
		done: make(chan struct{}),
	}, nil
}

// refuse answers a refused peer with an SPMI error in reply to the Init
// it is about to send, then reads that Init: closing with it unread would
// turn the answer into a connection reset on the supplier's side.
func refuse(c *net.UnixConn, reason string, lim ddswire.Limits) {
	ddswire.WriteMessage(c, ddswire.NewReply(ddswire.MsgInit, 0, spmierr.Errorf(spmierr.SiInitFailed, "%s", reason)), lim)
	c.CloseWrite()
	c.SetReadDeadline(time.Now().Add(time.Second))
	io.Copy(io.Discard, io.LimitReader(c, int64(lim.MaxFrame)+8))
}

// Serve accepts suppliers until Close; it also runs the liveness checks.
func (s *Server) Serve() error {
	ctx, cancel := context.WithCancel(context.Background())
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		cancel()
		return nil
	}
	s.stop = cancel
	s.mu.Unlock()
	s.wg.Add(1)
	go s.watch()
	return s.ln.Serve(ctx, func(_ context.Context, c *net.UnixConn, p unixsock.Peer) { s.serveConn(c, p) })
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close stops accepting, drops every connection and registration (without
// setting SiShGoAway: suppliers may register again with the next daemon)
// and waits for the goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	if s.stop != nil {
		s.stop()
	}
	s.mu.Unlock()
	err := s.ln.Close()
	s.wg.Wait()
	for _, sup := range s.reg.all() {
		s.reg.remove(sup)
		sup.unmap()
	}
	return err
}

// Stats are the server's counters.
type Stats struct {
	Suppliers int // registered now
	// StaleReads counts reads of a supplier that found a batch open on
	// every attempt (ReadConsistent), so its previous consistent values
	// were served instead.
	StaleReads uint64
}

// Stats returns the current counters.
func (s *Server) Stats() Stats {
	return Stats{Suppliers: len(s.reg.all()), StaleReads: s.reg.stale.Load()}
}

// Provider serves the registered suppliers in a Hierarchy.
func (s *Server) Provider() *Provider { return &Provider{reg: s.reg} }

// watch checks stamps and faults about once per tick.
func (s *Server) watch() {
	defer s.wg.Done()
	t := time.NewTicker(s.tick)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		case <-s.reg.faults:
		}
		s.checkSuppliers(s.reg.now())
	}
}

// checkSuppliers removes the suppliers found dead at now (a stamp older
// than the timeout, a fault).
func (s *Server) checkSuppliers(now time.Time) {
	for _, sup := range s.reg.all() {
		if why := sup.check(now, s.timeout); why != "" {
			s.log.Warn("dds: supplier assumed dead", "pid", sup.peer.PID, "vendor", sup.vendor.Name, "why", why)
			s.kill(sup, true)
		}
	}
}

// kill removes a supplier's contexts at once, optionally sets SiShGoAway,
// unmaps its file and closes its connection. It is idempotent.
func (s *Server) kill(sup *supplier, goAway bool) {
	s.reg.remove(sup)
	if goAway {
		sup.goAway()
	}
	sup.unmap()
	sup.conn.Close()
}
