package dds

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/internal/peercred"
)

// ServerConfig sets up a Server. Zero fields take their defaults.
type ServerConfig struct {
	Socket       string      // socket path (<run dir>/dds.sock)
	Mode         os.FileMode // socket mode, default 0660
	Group        int         // socket group; <= 0 leaves it unchanged
	AllowUIDs    []uint32    // peers allowed by uid
	AllowGIDs    []uint32    // peers allowed by gid; both empty: own uid and root
	StampTimeout time.Duration
	MaxSuppliers int
	IOTimeout    time.Duration // to finish a started frame or a reply
	OnChange     func()        // after every change of the served contexts; must not block
	Limits       Limits
	Logger       *slog.Logger
}

// Stamp timeout bounds and defaults (the guide's 15..600 s, default 30).
const (
	MinStampTimeout     = 15 * time.Second
	MaxStampTimeout     = 600 * time.Second
	DefaultStampTimeout = 30 * time.Second
	DefaultMaxSuppliers = 256
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
	ln      *net.UnixListener
	timeout time.Duration // stamp timeout (tests shorten it)
	tick    time.Duration // liveness check period

	mu     sync.Mutex
	conns  map[*net.UnixConn]struct{}
	closed bool
	done   chan struct{}
	wg     sync.WaitGroup
}

// NewServer listens on cfg.Socket. A stale socket file nobody listens on
// is removed; anything else at the path is an error. Serve accepts.
func NewServer(cfg ServerConfig) (*Server, error) {
	cfg, err := cfg.Norm()
	if err != nil {
		return nil, err
	}
	if err := removeStale(cfg.Socket); err != nil {
		return nil, err
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: cfg.Socket, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("dds: %w", err)
	}
	ln.SetUnlinkOnClose(true)
	if err := os.Chmod(cfg.Socket, cfg.Mode); err == nil && cfg.Group > 0 {
		err = os.Lchown(cfg.Socket, -1, cfg.Group)
	}
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("dds: socket permissions: %w", err)
	}
	reg := newRegistry(cfg.MaxSuppliers, cfg.Limits)
	reg.setOnChange(cfg.OnChange)
	return &Server{
		cfg: cfg, log: cfg.Logger, reg: reg,
		ln: ln, timeout: cfg.StampTimeout, tick: time.Second,
		conns: map[*net.UnixConn]struct{}{}, done: make(chan struct{}),
	}, nil
}

func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("dds: %w", err)
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("dds: %s exists and is not a socket", path)
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return fmt.Errorf("dds: %s: another daemon is listening", path)
	}
	return os.Remove(path)
}

// Serve accepts suppliers until Close; it also runs the liveness checks.
func (s *Server) Serve() error {
	s.wg.Add(1)
	go s.watch()
	for {
		c, err := s.ln.AcceptUnix()
		if err != nil {
			if s.isClosed() {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			s.log.Warn("dds: accept", "err", err)
			time.Sleep(50 * time.Millisecond)
			continue
		}
		serve, stop := s.admit(c)
		if stop {
			c.Close()
			return nil
		}
		if !serve {
			s.log.Warn("dds: too many connections; refused one")
			c.Close()
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.untrack(c)
			s.serveConn(c)
		}()
	}
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// admit tracks a new connection: stop once closed, !serve over the limit
// (which bounds connections that have not registered yet).
func (s *Server) admit(c *net.UnixConn) (serve, stop bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return false, true
	case len(s.conns) >= 2*s.cfg.MaxSuppliers+16:
		return false, false
	}
	s.conns[c] = struct{}{}
	return true, false
}

func (s *Server) untrack(c *net.UnixConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
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
	err := s.ln.Close()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	for _, sup := range s.reg.all() {
		s.reg.remove(sup)
		sup.unmap()
	}
	return err
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
		now := time.Now()
		for _, sup := range s.reg.all() {
			if why := sup.check(now, s.timeout); why != "" {
				s.log.Warn("dds: supplier assumed dead", "pid", sup.pid, "vendor", sup.vendor.Name, "why", why)
				s.kill(sup, true)
			}
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

// peerAllowed applies the uid/gid lists to SO_PEERCRED credentials; with
// both empty, the daemon's own user and root.
func (s *Server) peerAllowed(cr *unix.Ucred) bool {
	if len(s.cfg.AllowUIDs) == 0 && len(s.cfg.AllowGIDs) == 0 {
		return cr.Uid == 0 || cr.Uid == uint32(os.Geteuid())
	}
	return peercred.Listed(cr, s.cfg.AllowUIDs, s.cfg.AllowGIDs)
}
