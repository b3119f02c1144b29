package ddsclient

import (
	"errors"
	"sync"
	"time"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
)

// Options tune Start; the zero value (or nil) is fine.
type Options struct {
	// Socket is the daemon's socket path; empty means SocketPath().
	Socket string
	// AreaSize is the data area in bytes (SpmiDdsInit's sixth argument).
	// It is rounded up to 8 and enlarged to hold the permanent statistics
	// and one instance of the largest template; 0 means room for 64.
	AreaSize uint32
	// AutoStamp stamps SiShT on every Set and Add.
	AutoStamp bool
	// Limits, when set, are checked before registering. Zero checks only
	// what the formats can carry (ddswire.Ceilings); the daemon applies its own
	// configured limits either way.
	Limits ddswire.Limits
	// Watch, if positive, starts a goroutine that calls Check this often,
	// so a daemon restart is noticed and survived without other calls.
	Watch time.Duration

	now func() time.Time // the clock of Stamp; tests replace it
}

// Supplier is a registered supplier. Its methods are safe for concurrent
// use, except that neither a handle nor Stamp or Update may be used once
// Exit has begun (the mapping goes away).
type Supplier struct {
	mu     sync.Mutex
	v      *Vendor
	init   *ddswire.Init
	opt    Options
	sock   string
	shm    *shm
	conn   *conn // nil while disconnected
	regno  uint64
	live   []*Instance
	exited bool

	stop      chan struct{} // watcher, with Options.Watch
	stopOnce  sync.Once
	watchDone chan struct{}
}

// Start lays out and creates the shared file at path, maps it, and
// registers the declarations of v with the daemon. A Vendor is started
// once and must not be changed afterwards.
func Start(v *Vendor, path string, opt *Options) (*Supplier, error) {
	if v.started {
		return nil, spmierr.Errorf(spmierr.SiBadArgument, "%s: declarations already started", v.path)
	}
	s := &Supplier{v: v}
	if opt != nil {
		s.opt = *opt
	}
	if s.opt.Limits == (ddswire.Limits{}) {
		s.opt.Limits = ddswire.Ceilings()
	}
	if s.opt.now == nil {
		s.opt.now = time.Now
	}
	s.sock = s.opt.Socket
	if s.sock == "" {
		s.sock = SocketPath()
	}
	s.init = v.init(s.opt.AreaSize)
	s.init.File = path
	chk := *s.init
	chk.Generation = 1 // the real one is drawn when the file is published
	if _, err := ddswire.CheckInit(&chk, s.opt.Limits); err != nil {
		return nil, err
	}
	m, err := createShm(path, s.init)
	if err != nil {
		return nil, err
	}
	s.shm = m
	v.started = true
	for _, h := range v.handles {
		h.c.bind(m.area, h.off)
		if s.opt.AutoStamp {
			h.c.stamp = s
		}
	}
	s.Stamp()
	if err := s.register(); err != nil {
		s.unbind()
		v.started = false
		_ = m.close(true)
		return nil, err
	}
	if s.opt.Watch > 0 {
		s.stop, s.watchDone = make(chan struct{}), make(chan struct{})
		go s.watch(s.opt.Watch)
	}
	return s, nil
}

// register publishes a new generation and sends Init; s.mu held or s new.
func (s *Supplier) register() error {
	gen, err := s.shm.newGen()
	if err != nil {
		return err
	}
	s.init.Generation = gen
	c, err := dial(s.sock)
	if err != nil {
		return err
	}
	c.lim = s.opt.Limits
	regno, err := c.roundTrip(s.init, int(s.shm.f.Fd()))
	if err != nil {
		_ = c.close()
		return err
	}
	s.conn, s.regno = c, regno
	return nil
}

// Registration is the number the daemon gave the current registration.
func (s *Supplier) Registration() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.regno
}

// Stamp writes the current time into SiShT, the daemon's sign of life, as
// a struct timeval with 64-bit members (the daemon only looks for change).
func (s *Supplier) Stamp() {
	now := s.opt.now()
	s.shm.stamp(now.Unix(), int64(now.Nanosecond()/1000))
}

// Update runs f, which sets a batch of values, then stamps once. The
// daemon serves the batch whole: every read shows all of f's writes or
// none of them (docs/DDS.md §1, Batches). Batches may run in several
// goroutines at once and may nest. Each costs two atomic increments (and
// a wait of microseconds while the daemon copies values); a Set outside
// Update costs what it did.
func (s *Supplier) Update(f func()) {
	s.shm.begin()
	defer func() {
		s.shm.end()
		s.Stamp()
	}()
	f()
}

// GoAway reports SiShGoAway: the daemon gave up on this supplier, which
// should call Exit.
func (s *Supplier) GoAway() bool { return s.shm.load32(ddswire.OffGoAway) != 0 }

// Interval is SiShInterval: milliseconds between the daemon's reads.
func (s *Supplier) Interval() time.Duration {
	return time.Duration(int32(s.shm.load32(ddswire.OffInterval))) * time.Millisecond
}

// Subscribers is SiShSubscrib: how many values the daemon currently reads.
func (s *Supplier) Subscribers() int { return int(int32(s.shm.load32(ddswire.OffSubscrib))) }

// Connected reports whether the registration connection is up, as far as
// the last call knows.
func (s *Supplier) Connected() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn != nil
}

// Check notices a daemon that went away (one non-blocking peek at the
// socket) and reconnects if so. It returns nil when registered.
func (s *Supplier) Check() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ready()
}

var errAssumedDead = spmierr.Errorf(spmierr.SiAssumedDead, "the daemon set SiShGoAway: call Exit")

// drop forgets a dead connection; s.mu held.
func (s *Supplier) drop() {
	if s.conn != nil {
		_ = s.conn.close()
		s.conn = nil
	}
}

// ready reconnects if needed (s.mu held). Offsets of instances may
// change, so callers build their message after it.
func (s *Supplier) ready() error {
	if s.exited {
		return spmierr.Errorf(spmierr.SiNotInit, "the supplier has exited")
	}
	if s.GoAway() {
		s.drop()
		return errAssumedDead
	}
	if s.conn != nil && s.conn.closed() {
		s.drop()
	}
	return s.connect()
}

// request sends m on a connection made ready; s.mu held.
func (s *Supplier) request(m ddswire.Message) (uint64, error) {
	if err := s.ready(); err != nil {
		return 0, err
	}
	v, err := s.conn.roundTrip(m, -1)
	if errors.Is(err, ErrDisconnected) {
		s.drop()
	}
	return v, err
}

func (s *Supplier) unbind() {
	for _, h := range s.v.handles {
		h.c.park()
	}
	for _, in := range s.live {
		in.park()
	}
}

// Exit unregisters (best effort if the daemon is gone), unmaps and removes
// the shared file. Handles then write to private memory.
func (s *Supplier) Exit() error {
	s.stopWatch()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.exited {
		return nil
	}
	var err error
	if s.conn != nil {
		_, err = s.conn.roundTrip(&ddswire.Exit{}, -1)
		if errors.Is(err, ErrDisconnected) {
			err = nil // the registration went with the connection
		}
		s.drop()
	}
	s.exited = true
	s.unbind()
	s.live = nil
	return errors.Join(err, s.shm.close(true))
}
