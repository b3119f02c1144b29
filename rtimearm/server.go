package rtimearm

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/armring"
	"github.com/perfagent/subagent/internal/peercred"
)

// ServerConfig sets up a Server.
type ServerConfig struct {
	Socket    string           // <run dir>/arm.sock
	Geometry  armring.Geometry // of each process's file
	MaxProcs  int
	AllowUIDs []uint32 // both empty: everyone (ARM applications run as any user)
	AllowGIDs []uint32
	IOTimeout time.Duration // for the Hello
	OnChange  func()        // a process came or went; must not block
	Logger    *slog.Logger
}

// Server accepts ARM processes on a Unix socket: each gets its own file.
type Server struct {
	cfg ServerConfig
	reg *Registry
	log *slog.Logger
	ln  *net.UnixListener

	mu     sync.Mutex
	conns  map[*net.UnixConn]bool
	closed bool
	wg     sync.WaitGroup
}

// NewServer listens on cfg.Socket (a stale socket file is replaced).
func NewServer(cfg ServerConfig, reg *Registry) (*Server, error) {
	if err := cfg.Geometry.Check(); err != nil {
		return nil, err
	}
	if cfg.IOTimeout <= 0 {
		cfg.IOTimeout = 2 * time.Second
	}
	if cfg.MaxProcs <= 0 {
		cfg.MaxProcs = 256
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if fi, err := os.Lstat(cfg.Socket); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("arm socket %s exists and is not a socket", cfg.Socket)
		}
		os.Remove(cfg.Socket)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: cfg.Socket, Net: "unix"})
	if err != nil {
		return nil, err
	}
	ln.SetUnlinkOnClose(true)
	// Any user may connect; the allow lists decide after SO_PEERCRED.
	if err := os.Chmod(cfg.Socket, 0o666); err != nil {
		ln.Close()
		return nil, err
	}
	return &Server{cfg: cfg, reg: reg, log: cfg.Logger, ln: ln, conns: map[*net.UnixConn]bool{}}, nil
}

// Registry is what the server feeds.
func (s *Server) Registry() *Registry { return s.reg }

// Serve accepts until Close.
func (s *Server) Serve() error {
	for {
		c, err := s.ln.AcceptUnix()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				s.wg.Wait()
				return nil
			}
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			return err
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			continue
		}
		s.conns[c] = true
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.handle(c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			c.Close()
		}()
	}
}

// Close stops accepting and drops every process (their records left in
// the rings are drained first).
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	return s.ln.Close()
}

// allowed applies the uid/gid lists; both empty admit everyone, since
// instrumented programs run as any user.
func (s *Server) allowed(cr *unix.Ucred) bool {
	if len(s.cfg.AllowUIDs) == 0 && len(s.cfg.AllowGIDs) == 0 {
		return true
	}
	return peercred.Listed(cr, s.cfg.AllowUIDs, s.cfg.AllowGIDs)
}

// refuse answers with an error status; the connection is then closed.
func (s *Server) refuse(c *net.UnixConn, msg string) {
	s.reg.mu.Lock()
	s.reg.refused++
	s.reg.mu.Unlock()
	c.SetWriteDeadline(time.Now().Add(s.cfg.IOTimeout))
	c.Write((&armring.Welcome{Status: -1, Msg: msg}).Marshal())
	s.log.Warn("arm: registration refused", "err", msg)
}

func (s *Server) handle(c *net.UnixConn) {
	cr, err := peercred.Of(c)
	if err != nil {
		s.refuse(c, fmt.Sprintf("peer credentials: %v", err))
		return
	}
	if !s.allowed(cr) {
		s.refuse(c, fmt.Sprintf("uid %d gid %d is not allowed (arm.allow_uids, arm.allow_gids)", cr.Uid, cr.Gid))
		return
	}
	c.SetReadDeadline(time.Now().Add(s.cfg.IOTimeout))
	typ, body, err := armring.ReadFrame(c)
	if err != nil {
		s.refuse(c, fmt.Sprintf("reading Hello: %v", err))
		return
	}
	if typ != armring.MsgHello {
		s.refuse(c, fmt.Sprintf("message type %d, want Hello (%d)", typ, armring.MsgHello))
		return
	}
	h, err := armring.DecodeHello(body)
	if err == nil && h.PID != cr.Pid {
		err = fmt.Errorf("Hello: pid %d, the socket's peer is %d", h.PID, cr.Pid)
	}
	if err != nil {
		s.refuse(c, err.Error())
		return
	}
	p, fd, err := s.attach(cr, h)
	if err != nil {
		s.refuse(c, err.Error())
		return
	}
	w := armring.Welcome{Gen: p.id, Geometry: s.cfg.Geometry}
	c.SetWriteDeadline(time.Now().Add(s.cfg.IOTimeout))
	_, _, err = c.WriteMsgUnix(w.Marshal(), unix.UnixRights(fd), nil)
	unix.Close(fd)
	if err != nil {
		s.detach(p)
		return
	}
	s.log.Debug("arm: process attached", "pid", p.pid, "prog", p.prog, "uid", p.uid)
	c.SetReadDeadline(time.Time{})
	// The process sends nothing more: EOF (or anything else) means it is gone.
	var b [64]byte
	c.Read(b[:])
	s.detach(p)
}

func (s *Server) notify() {
	if s.cfg.OnChange != nil {
		s.cfg.OnChange()
	}
}

// attach creates the process's file and adds it to the registry.
func (s *Server) attach(cr *unix.Ucred, h armring.Hello) (*proc, int, error) {
	r := s.reg
	r.mu.Lock()
	if len(r.procs) >= s.cfg.MaxProcs {
		r.mu.Unlock()
		return nil, -1, fmt.Errorf("%d processes are registered, the limit (arm.max_processes)", s.cfg.MaxProcs)
	}
	r.nextID++
	id := r.nextID<<16 | uint64(time.Now().UnixNano()&0xffff)
	r.mu.Unlock()
	f, fd, unmap, err := createFile(s.cfg.Geometry, id, cr.Pid)
	if err != nil {
		return nil, -1, fmt.Errorf("creating the ring: %v", err)
	}
	p := &proc{id: id, pid: cr.Pid, uid: cr.Uid, prog: h.Prog, f: f, unmap: unmap}
	r.mu.Lock()
	r.add(p)
	r.mu.Unlock()
	s.notify()
	return p, fd, nil
}

func (s *Server) detach(p *proc) {
	r := s.reg
	r.mu.Lock()
	if r.remove(p) {
		p.close(r, r.now())
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
