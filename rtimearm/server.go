package rtimearm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/client/armring"
	"github.com/perfagent/subagent/internal/unixsock"
)

// ServerConfig sets up a Server.
type ServerConfig struct {
	Socket    string           // <run dir>/arm.sock
	Geometry  armring.Geometry // of each process's file
	AllowUIDs []uint32         // both empty: everyone (ARM applications run as any user)
	AllowGIDs []uint32
	IOTimeout time.Duration // for the Hello
	OnChange  func()        // a process came or went; must not block
	Logger    *slog.Logger
}

// Server accepts ARM processes on a Unix socket: each gets its own file.
// The socket, the allow list, connection limits and refusal logging are
// unixsock's; the registry's limits decide on each Hello.
type Server struct {
	cfg     ServerConfig
	reg     *Registry
	log     *slog.Logger
	ln      *unixsock.Listener
	closing atomic.Bool
	done    chan struct{} // closed by Close
	once    sync.Once

	nmu      sync.Mutex // OnChange, at most once per notifyEvery
	notified time.Time
	pending  bool
	later    *time.Timer   // the pending call; stopped by Close
	called   chan struct{} // closed when later's call ended or was dropped
	stopped  bool          // Close was called: no OnChange any more
}

// notifyEvery bounds how often OnChange is called: each call makes the
// next read of the tree read every context again, so processes coming and
// going in a flood must not turn every SNMP request into a full refresh.
const notifyEvery = time.Second

// Connections beyond the registered processes: Hellos in progress. Each
// is closed within IOTimeout if it says nothing.
const helloSlack = 32

// NewServer listens on cfg.Socket (a stale socket file is replaced). The
// socket is 0666: any local program may post, as ARM intends; the
// registry's limits per user and per process keep one from taking all.
func NewServer(cfg ServerConfig, reg *Registry) (*Server, error) {
	if err := cfg.Geometry.Check(); err != nil {
		return nil, err
	}
	if cfg.IOTimeout <= 0 {
		cfg.IOTimeout = 2 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, reg: reg, log: cfg.Logger, done: make(chan struct{})}
	var admit func(unixsock.Peer) error
	if len(cfg.AllowUIDs) > 0 || len(cfg.AllowGIDs) > 0 {
		allow := unixsock.Owners().With(cfg.AllowUIDs, cfg.AllowGIDs)
		admit = func(p unixsock.Peer) error {
			if !allow.Admits(p) {
				return errors.New("this user is not allowed (arm.allow_uids, arm.allow_gids)")
			}
			return nil
		}
	}
	lim := reg.Limits()
	ln, err := unixsock.Listen(unixsock.Config{
		Name: "arm", Path: cfg.Socket, Mode: 0o666, Admit: admit,
		MaxConns:  lim.MaxProcs + helloSlack,
		MaxPerUID: lim.MaxProcsPerUID + helloSlack/4,
		Refuse:    s.answerRefusal,
		Logger:    cfg.Logger,
	})
	if err != nil {
		return nil, err
	}
	s.ln = ln
	return s, nil
}

// Registry is what the server feeds.
func (s *Server) Registry() *Registry { return s.reg }

// Serve accepts until Close; running out of descriptors slows it down
// but never ends it.
func (s *Server) Serve() error {
	return s.ln.Serve(context.Background(), s.handle)
}

// Close stops accepting and drops every process (their records left in
// the rings are drained first).
func (s *Server) Close() error {
	s.stopNotify()
	s.closing.Store(true)
	s.once.Do(func() { close(s.done) })
	return s.ln.Close()
}

// answerRefusal is every refusal's answer: a Welcome with a negative
// status, which the libraries turn into measuring nothing.
func (s *Server) answerRefusal(c *net.UnixConn, reason string) {
	s.reg.mu.Lock()
	s.reg.refused++
	s.reg.mu.Unlock()
	c.Write((&armring.Welcome{Status: -1, Msg: withSetting(reason)}).Marshal())
}

// withSetting names the settings behind unixsock's connection limits,
// whose reasons name none (NewServer derives them from these).
func withSetting(reason string) string {
	switch {
	case strings.HasSuffix(reason, "connections open, the limit per user"):
		return reason + " (arm.max_processes_per_uid, plus 8 Hellos in progress)"
	case strings.HasSuffix(reason, "connections are open, the limit"):
		return reason + " (arm.max_processes, plus 32 Hellos in progress)"
	}
	return reason
}

// Reasons of Hello refusals: fixed texts, since unixsock logs each once
// per user and reason.
const (
	refuseNoHello  = "no complete Hello (closed or timed out)"
	refuseNotHello = "the first message is not a Hello"
	refuseBadHello = "the Hello does not decode"
	refusePID      = "the Hello's pid is not the connecting process's"
)

func (s *Server) handle(_ context.Context, c *net.UnixConn, peer unixsock.Peer) {
	c.SetReadDeadline(time.Now().Add(s.cfg.IOTimeout))
	typ, body, err := armring.ReadFrame(c)
	if err != nil {
		s.ln.Refuse(c, peer, refuseNoHello)
		return
	}
	if typ != armring.MsgHello {
		s.ln.Refuse(c, peer, refuseNotHello)
		return
	}
	h, err := armring.DecodeHello(body)
	switch {
	case err != nil && h.Version != armring.Version:
		s.ln.Refuse(c, peer, fmt.Sprintf("the Hello's version is not %d", armring.Version))
		return
	case err != nil:
		s.ln.Refuse(c, peer, refuseBadHello)
		return
	case h.PID != peer.PID:
		s.ln.Refuse(c, peer, refusePID)
		return
	}
	p, fd, reason, over := s.attach(peer, h)
	if reason != "" {
		if over {
			s.pause()
		}
		s.ln.Refuse(c, peer, reason)
		return
	}
	w := armring.Welcome{Gen: p.id, Geometry: s.cfg.Geometry}
	c.SetWriteDeadline(time.Now().Add(s.cfg.IOTimeout))
	_, _, err = c.WriteMsgUnix(w.Marshal(), unix.UnixRights(fd), nil)
	unix.Close(fd)
	if err != nil {
		s.detach(p, false)
		return
	}
	s.log.Debug("arm: process attached", "pid", p.pid, "prog", p.prog, "uid", p.uid)
	c.SetReadDeadline(time.Time{})
	// The process sends only ScanNow bytes, asking for its new entries to
	// be read now (a library waiting for the verdict on an application);
	// EOF or anything else means it is gone.
	var b [64]byte
	var last time.Time
	for {
		n, err := c.Read(b[:])
		if err != nil || n == 0 || !allScanNow(b[:n]) {
			break
		}
		// At most one scan per scanEvery: a process asking in a loop
		// costs the daemon nothing more than its drains do.
		if wait := time.Until(last.Add(scanEvery)); wait > 0 {
			time.Sleep(wait)
		}
		last = time.Now()
		s.reg.scanNow(p)
	}
	s.detach(p, true)
}

// scanEvery bounds how often one process may ask for a scan.
const scanEvery = 10 * time.Millisecond

func allScanNow(b []byte) bool {
	for _, c := range b {
		if c != armring.ScanNow {
			return false
		}
	}
	return true
}

// notify calls OnChange now, or once at the end of the current
// notifyEvery when it was called within it.
func (s *Server) notify() {
	if s.cfg.OnChange == nil {
		return
	}
	s.nmu.Lock()
	defer s.nmu.Unlock()
	if s.pending || s.stopped {
		return
	}
	if wait := time.Until(s.notified.Add(notifyEvery)); wait > 0 {
		s.pending = true
		called := make(chan struct{})
		s.called = called
		s.later = time.AfterFunc(wait, func() {
			defer close(called)
			s.nmu.Lock()
			stopped := s.stopped
			s.pending, s.notified = false, time.Now()
			s.nmu.Unlock()
			if !stopped {
				s.cfg.OnChange()
			}
		})
		return
	}
	s.notified = time.Now()
	s.cfg.OnChange()
}

// stopNotify ends the notifications: a pending one is dropped, or waited
// for when it is being made, so that none comes after Close.
func (s *Server) stopNotify() {
	s.nmu.Lock()
	s.stopped = true
	later, called := s.later, s.called
	s.nmu.Unlock()
	if later != nil && !later.Stop() {
		<-called
	}
}

// attach creates the process's file and adds it to the registry, or
// returns why not. The ring is counted against the limits before its
// file exists, so concurrent Hellos cannot pass a limit together.
func (s *Server) attach(peer unixsock.Peer, h armring.Hello) (p *proc, fd int, reason string, over bool) {
	r := s.reg
	rg, reason := r.admit(peer.UID, peer.PID, s.cfg.Geometry.FileLen())
	if reason != "" {
		return nil, -1, reason, true
	}
	r.mu.Lock()
	r.nextID++
	id := r.nextID<<16 | uint64(time.Now().UnixNano()&0xffff)
	r.mu.Unlock()
	f, fd, unmap, err := createFile(s.cfg.Geometry, id, peer.PID)
	var st unix.Stat_t
	if err == nil {
		if err = unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			unmap()
		}
	}
	if err != nil {
		r.mu.Lock()
		r.releaseRing(rg)
		r.mu.Unlock()
		return nil, -1, "creating the ring failed: " + errnoText(err), false
	}
	p = &proc{id: id, pid: peer.PID, uid: peer.UID, prog: h.Prog, f: f, unmap: unmap, ring: rg}
	r.mu.Lock()
	rg.dev, rg.ino = st.Dev, st.Ino
	p.drained = r.now()
	r.add(p)
	r.mu.Unlock()
	s.notify()
	return p, fd, "", false
}

// overPause is how long a Hello beyond a limit waits for its refusal: a
// program asking in a loop then sleeps instead of spinning against the
// daemon (its connection counts against its user meanwhile). The
// libraries wait 2 s for an answer, and then back off.
const overPause = 500 * time.Millisecond

// pause waits overPause, or until the server closes.
func (s *Server) pause() {
	t := time.NewTimer(overPause)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.done:
	}
}

// errnoText is err's system error alone: a stable reason to log.
func errnoText(err error) string {
	var en unix.Errno
	if errors.As(err, &en) {
		return en.Error()
	}
	return "error"
}

// detach ends a registration; received tells whether the process got
// its file, whose place then lasts until the process lets it go (ring).
func (s *Server) detach(p *proc, received bool) {
	r := s.reg
	stopping := s.closing.Load()
	r.mu.Lock()
	if r.remove(p) {
		p.close(r, r.now(), !stopping)
		r.ended(p.ring, received && !stopping)
	}
	r.mu.Unlock()
	s.log.Debug("arm: process detached", "pid", p.pid, "prog", p.prog)
	s.notify()
}

// createFile makes a sealed memfd of the geometry's size: the process can
// write into it but never shrink it under the daemon's mapping.
func createFile(g armring.Geometry, gen uint64, pid int32) (*armring.File, int, func(), error) {
	fd, err := unix.MemfdCreate("subagent-arm", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, -1, nil, err
	}
	n := int64(g.FileLen())
	fail := func(err error) (*armring.File, int, func(), error) {
		unix.Close(fd)
		return nil, -1, nil, err
	}
	if err := unix.Ftruncate(fd, n); err != nil {
		return fail(err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL); err != nil {
		return fail(err)
	}
	mem, err := unix.Mmap(fd, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fail(err)
	}
	f, err := armring.NewFile(mem, g)
	if err != nil {
		unix.Munmap(mem)
		return fail(err)
	}
	h := armring.Header{Geometry: g, Gen: gen, PID: pid}
	h.Encode(mem)
	f.InitSlots()
	return f, fd, func() { unix.Munmap(mem) }, nil
}
