// Package unixsock is the daemon's one way to listen on a Unix socket:
// the control, supplier (DDS) and ARM sockets all open, guard and accept
// through it. It owns what they must agree on: a stale socket is replaced
// but a live one is not, mode and group are set before anyone can race
// for them, each peer's credentials are checked on accept against an
// allow list, connections are limited in total and per user, running out
// of file descriptors slows accepting down instead of stopping the daemon,
// and refusals are answered in the socket's own protocol and logged once
// per user and reason.
package unixsock

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"
)

// Config sets up a Listener. Zero fields take their defaults.
type Config struct {
	Name  string      // "control", "dds", "arm": in logs and errors
	Path  string      // the socket file
	Mode  os.FileMode // default 0660
	Group int         // group of the socket file; <= 0 leaves the daemon's
	// Admit decides on a peer after its credentials are read; a non-nil
	// error is the reason it is refused (without the pid: reasons are
	// counted per user). Nil admits everyone.
	Admit    func(Peer) error
	MaxConns int // open connections in total, default 64
	// MaxPerUID bounds the open connections of one user other than root
	// and the daemon's own (default MaxConns/4, at least 1), so that no
	// local user can take every place.
	MaxPerUID int
	// Refuse answers a refused peer in the socket's protocol before the
	// connection is closed; a write deadline is already set, and it must
	// return within a second or so. Nil closes.
	Refuse func(c *net.UnixConn, reason string)
	Logger *slog.Logger
}

const (
	defaultMaxConns = 64
	refuseWrite     = time.Second
	maxBackoff      = time.Second
	// maxRefusing bounds refusals being answered at once; past it a
	// refused peer is closed without an answer.
	maxRefusing = 16
)

// Listener accepts on one socket.
type Listener struct {
	cfg      Config
	ln       *net.UnixListener
	log      *refusalLog
	owners   Allow
	refusing chan struct{}

	mu     sync.Mutex
	open   map[*net.UnixConn]uint32 // connection -> peer uid
	perUID map[uint32]int
	closed bool
	wg     sync.WaitGroup
	stats  Stats
	// accept failures not yet logged, and when they last were
	failedSince int
	failLogged  time.Time
}

// Stats counts what a listener did.
type Stats struct {
	Accepted, Refused, AcceptErrors uint64
	Open                            int
}

// Listen creates the socket. A socket file nobody answers on is replaced;
// one that answers belongs to a running daemon, and anything that is not a
// socket is left alone: both are errors naming the path.
func Listen(cfg Config) (*Listener, error) {
	if cfg.Mode == 0 {
		cfg.Mode = 0o660
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = defaultMaxConns
	}
	if cfg.MaxPerUID <= 0 {
		cfg.MaxPerUID = max(1, cfg.MaxConns/4)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if err := removeStale(cfg.Name, cfg.Path); err != nil {
		return nil, err
	}
	// Until the chmod below the mode follows the umask; a peer that
	// connects in between still meets the allow list on accept.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: cfg.Path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("%s socket: %w", cfg.Name, err)
	}
	ln.SetUnlinkOnClose(true)
	if cfg.Group > 0 {
		if err := os.Lchown(cfg.Path, -1, cfg.Group); err != nil {
			ln.Close()
			return nil, fmt.Errorf("%s socket %s: group %d: %w", cfg.Name, cfg.Path, cfg.Group, err)
		}
	}
	if err := os.Chmod(cfg.Path, cfg.Mode.Perm()); err != nil {
		ln.Close()
		return nil, fmt.Errorf("%s socket %s: mode %04o: %w", cfg.Name, cfg.Path, cfg.Mode.Perm(), err)
	}
	return &Listener{
		cfg: cfg, ln: ln, log: newRefusalLog(cfg.Logger, cfg.Name),
		owners: Owners(), refusing: make(chan struct{}, maxRefusing),
		open: map[*net.UnixConn]uint32{}, perUID: map[uint32]int{},
	}, nil
}

func removeStale(name, path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s socket: %w", name, err)
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("%s socket: %s exists and is not a socket; remove it or choose another path", name, path)
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return fmt.Errorf("%s socket: another daemon serves %s; stop it or use another --run-dir", name, path)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("%s socket: removing the stale %s: %w", name, path, err)
	}
	return nil
}

// Path is the socket's file.
func (l *Listener) Path() string { return l.cfg.Path }

// Stats returns the counts so far.
func (l *Listener) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.stats
	s.Open = len(l.open)
	return s
}

// Serve accepts until ctx is done or Close, running handle on its own
// goroutine for each admitted connection; the connection is closed when
// handle returns. Serve returns nil once closed, after every handler has
// returned: accept errors never end it.
func (l *Listener) Serve(ctx context.Context, handle func(ctx context.Context, c *net.UnixConn, p Peer)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-ctx.Done()
		l.Close()
	}()
	defer l.wg.Wait()
	backoff := time.Duration(0)
	for {
		c, err := l.ln.AcceptUnix()
		if err != nil {
			if l.isClosed() {
				return nil
			}
			backoff = l.acceptFailed(ctx, err, backoff)
			continue
		}
		backoff = 0
		p, ok := l.admit(c)
		if !ok {
			continue
		}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			defer l.untrack(c)
			handle(ctx, c, p)
		}()
	}
}

// acceptFailed waits a growing while after a failed accept: with no file
// descriptor left (EMFILE, ENFILE) or no memory, accepting again at once
// would spin; the pending peers wait in the backlog meanwhile. It logs
// at most once a minute, with the number of failures since.
func (l *Listener) acceptFailed(ctx context.Context, err error, backoff time.Duration) time.Duration {
	if backoff == 0 {
		backoff = 5 * time.Millisecond
	} else {
		backoff = min(2*backoff, maxBackoff)
	}
	l.mu.Lock()
	l.failedSince++
	n := l.failedSince
	due := l.failLogged.IsZero() || time.Since(l.failLogged) >= refusalEvery
	if due {
		l.failedSince, l.failLogged = 0, time.Now()
	}
	l.mu.Unlock()
	if due {
		l.cfg.Logger.Warn(l.cfg.Name+" socket: accept failed; slowing down", "err", err, "count", n)
	}
	l.mu.Lock()
	l.stats.AcceptErrors++ // after the log: tests wait for the count, then read the log
	l.mu.Unlock()
	select {
	case <-ctx.Done():
	case <-time.After(backoff):
	}
	return backoff
}

// admit reads the peer's credentials and applies the allow list and the
// limits; a refused peer is answered and closed on the side.
func (l *Listener) admit(c *net.UnixConn) (Peer, bool) {
	p, err := PeerOf(c)
	if err != nil {
		l.refuseAside(c, Peer{UID: ^uint32(0)}, err.Error())
		return p, false
	}
	if l.cfg.Admit != nil {
		if err := l.cfg.Admit(p); err != nil {
			l.refuseAside(c, p, err.Error())
			return p, false
		}
	}
	l.mu.Lock()
	var reason string
	switch {
	case l.closed:
		reason = "the daemon is stopping"
	case len(l.open) >= l.cfg.MaxConns:
		reason = fmt.Sprintf("%d connections are open, the limit", l.cfg.MaxConns)
	case l.perUID[p.UID] >= l.cfg.MaxPerUID && !l.owners.Admits(p):
		reason = fmt.Sprintf("uid %d has %d connections open, the limit per user", p.UID, l.cfg.MaxPerUID)
	default:
		l.open[c] = p.UID
		l.perUID[p.UID]++
		l.stats.Accepted++
	}
	l.mu.Unlock()
	if reason != "" {
		l.refuseAside(c, p, reason)
		return p, false
	}
	return p, true
}

// refuseAside answers a refused peer on its own goroutine, so that a slow
// peer cannot hold up accepting; with too many answers under way it is
// closed without one.
func (l *Listener) refuseAside(c *net.UnixConn, p Peer, reason string) {
	select {
	case l.refusing <- struct{}{}:
	default:
		l.count(p, reason)
		c.Close()
		return
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer func() { <-l.refusing }()
		l.Refuse(c, p, reason)
	}()
}

func (l *Listener) count(p Peer, reason string) {
	l.mu.Lock()
	l.stats.Refused++
	l.mu.Unlock()
	l.log.note(p, reason)
}

// Refuse answers c in the socket's protocol, closes it, counts the
// refusal and logs it once per user and reason (then a count now and then).
// Handlers use it for refusals of their own (a bad first message).
func (l *Listener) Refuse(c *net.UnixConn, p Peer, reason string) {
	l.count(p, reason)
	if l.cfg.Refuse != nil {
		c.SetWriteDeadline(time.Now().Add(refuseWrite))
		l.cfg.Refuse(c, reason)
	}
	c.Close()
}

func (l *Listener) untrack(c *net.UnixConn) {
	c.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	if uid, ok := l.open[c]; ok {
		delete(l.open, c)
		if l.perUID[uid]--; l.perUID[uid] <= 0 {
			delete(l.perUID, uid)
		}
	}
}

func (l *Listener) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// Close stops accepting, removes the socket file and closes every open
// connection; Serve then returns once the handlers have.
func (l *Listener) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	err := l.ln.Close()
	for c := range l.open {
		c.Close()
	}
	l.mu.Unlock()
	return err
}
