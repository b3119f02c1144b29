package agentx

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/testutil"
)

// ioTimeout bounds every single wait of the fake master on real sockets.
const ioTimeout = 5 * time.Second

// bubbleTimeout bounds the waits in a synctest bubble, where waiting costs
// no real time: far above every timer a test sets.
const bubbleTimeout = time.Hour

// socketDir returns a directory whose paths fit a Unix socket address
// (108 bytes), which a long test name in t.TempDir() may not.
func socketDir(t testing.TB) string {
	dir := t.TempDir()
	if len(dir) < 80 {
		return dir
	}
	dir, err := os.MkdirTemp("", "ax")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// fakeMaster is the master side of the protocol, driven step by step by
// the test goroutine over a real Unix (or TCP) socket, or over in-memory
// pipes inside a synctest bubble (newPipeMaster).
type fakeMaster struct {
	t      *testing.T
	ln     net.Listener
	addr   string        // as given to Config.Address
	path   string        // the socket path (Unix only)
	within time.Duration // bounds each wait; 0 means ioTimeout

	// pipes queues the master's ends of the subagent's dials (pipe
	// master only), as a listen backlog does.
	pipes chan net.Conn

	mu       sync.Mutex
	down     bool      // pipe master: dials fail as with no socket
	attempts []attempt // the subagent's dials (m.start), in order
}

// attempt is one dial of the subagent's.
type attempt struct {
	at  time.Time
	err error
}

func newFakeMaster(t *testing.T) *fakeMaster {
	t.Helper()
	path := filepath.Join(socketDir(t), "master")
	m := &fakeMaster{t: t, path: path, addr: "unix:" + path}
	m.listen()
	return m
}

func (m *fakeMaster) listen() {
	m.t.Helper()
	ln, err := net.Listen("unix", m.path)
	if err != nil {
		m.t.Fatal(err)
	}
	m.ln = ln
	m.t.Cleanup(func() { ln.Close() })
}

// newPipeMaster is a fakeMaster for a test in a synctest bubble: the
// subagent (started with m.start) dials it over net.Pipe, so that every
// timer and deadline on both sides runs on the bubble's clock.
func newPipeMaster(t *testing.T) *fakeMaster {
	return &fakeMaster{t: t, addr: "unix:/agentx-test-pipe", within: bubbleTimeout, pipes: make(chan net.Conn, 16)}
}

func (m *fakeMaster) bound() time.Duration {
	if m.within == 0 {
		return ioTimeout
	}
	return m.within
}

// setDown makes a pipe master refuse (true) or take (false) new dials.
func (m *fakeMaster) setDown(down bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.down = down
}

// dialer wraps the subagent's dial: it records every attempt and, for a
// pipe master, connects to it instead.
func (m *fakeMaster) dialer(real func(context.Context, string, string) (net.Conn, error)) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		at := time.Now()
		var c net.Conn
		var err error
		if m.pipes == nil {
			c, err = real(ctx, network, address)
		} else {
			c, err = m.dialPipe(ctx)
		}
		m.mu.Lock()
		m.attempts = append(m.attempts, attempt{at, err})
		m.mu.Unlock()
		return c, err
	}
}

func (m *fakeMaster) dialPipe(ctx context.Context) (net.Conn, error) {
	m.mu.Lock()
	down := m.down
	m.mu.Unlock()
	if down {
		return nil, &net.OpError{Op: "dial", Net: "unix", Err: os.NewSyscallError("connect", syscall.ENOENT)}
	}
	ours, theirs := net.Pipe()
	select {
	case m.pipes <- theirs:
		return ours, nil
	case <-ctx.Done():
		ours.Close()
		theirs.Close()
		return nil, ctx.Err()
	}
}

// dials returns the subagent's dial attempts so far.
func (m *fakeMaster) dials() []attempt {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]attempt(nil), m.attempts...)
}

// failedDials counts the attempts that failed.
func (m *fakeMaster) failedDials() int {
	n := 0
	for _, a := range m.dials() {
		if a.err != nil {
			n++
		}
	}
	return n
}

// accept waits, bounded, for the subagent to connect.
func (m *fakeMaster) accept() *masterConn {
	m.t.Helper()
	if m.pipes != nil {
		select {
		case c := <-m.pipes:
			m.t.Cleanup(func() { c.Close() })
			return &masterConn{t: m.t, c: c, br: bufio.NewReader(c), sessionID: 42, within: m.within}
		case <-time.After(m.bound()):
			m.t.Fatalf("subagent did not connect within %v", m.bound())
			return nil
		}
	}
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := m.ln.Accept()
		ch <- res{c, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			m.t.Fatalf("accept: %v", r.err)
		}
		m.t.Cleanup(func() { r.c.Close() })
		return &masterConn{t: m.t, c: r.c, br: bufio.NewReader(r.c), sessionID: 42, within: m.within}
	case <-time.After(m.bound()):
		m.ln.Close() // ends the Accept goroutine
		m.t.Fatalf("subagent did not connect within %v", m.bound())
		return nil
	}
}

type masterConn struct {
	t         *testing.T
	c         net.Conn
	br        *bufio.Reader
	sessionID uint32
	packetID  uint32
	within    time.Duration // bounds each read and write; 0 means ioTimeout
}

func (c *masterConn) deadline() time.Time {
	if c.within == 0 {
		return time.Now().Add(ioTimeout)
	}
	return time.Now().Add(c.within)
}

// readRaw reads one frame without decoding it.
func (c *masterConn) readRaw() []byte {
	c.t.Helper()
	c.c.SetReadDeadline(c.deadline())
	hb := make([]byte, headerLen)
	if _, err := io.ReadFull(c.br, hb); err != nil {
		c.t.Fatalf("master read: %v", err)
	}
	h, err := decodeHeader(hb)
	if err != nil {
		c.t.Fatalf("master read header: %v", err)
	}
	body := make([]byte, h.payloadLen)
	if _, err := io.ReadFull(c.br, body); err != nil {
		c.t.Fatalf("master read body: %v", err)
	}
	return append(hb, body...)
}

func (c *masterConn) read() *packet {
	c.t.Helper()
	raw := c.readRaw()
	p, err := decodePacket(raw)
	if err != nil {
		c.t.Fatalf("master decode: %v\n%x", err, raw)
	}
	return p
}

// expect reads one PDU and checks its type.
func (c *masterConn) expect(typ pduType) *packet {
	c.t.Helper()
	p := c.read()
	if p.typ != typ {
		c.t.Fatalf("master got %s, want %s: %+v", p.typ, typ, *p)
	}
	return p
}

// expectEOF checks that the subagent closed the connection.
func (c *masterConn) expectEOF() {
	c.t.Helper()
	c.c.SetReadDeadline(c.deadline())
	if n, err := c.br.Read(make([]byte, 1)); err == nil {
		c.t.Fatalf("read %d more bytes, want the connection closed", n)
	}
}

func (c *masterConn) writeRaw(b []byte) {
	c.t.Helper()
	c.c.SetWriteDeadline(c.deadline())
	if _, err := c.c.Write(b); err != nil {
		c.t.Fatalf("master write: %v", err)
	}
}

func (c *masterConn) send(p *packet) {
	c.t.Helper()
	p.version = version1
	b, err := appendPacket(nil, p)
	if err != nil {
		c.t.Fatal(err)
	}
	c.writeRaw(b)
}

// respond answers a PDU of the subagent's, as the master does, in the
// byte order of the request.
func (c *masterConn) respond(req *packet, code ErrorCode) {
	c.t.Helper()
	sid := req.sessionID
	if req.typ == typeOpen {
		sid = c.sessionID
	}
	c.send(&packet{header: header{typ: typeResponse, flags: req.flags & flagNetworkByteOrder, sessionID: sid,
		transactionID: req.transactionID, packetID: req.packetID}, sysUpTime: 1234, resError: code})
}

// ask sends a request of the master's and returns the subagent's answer.
func (c *masterConn) ask(p *packet) *packet {
	c.t.Helper()
	if p.sessionID == 0 {
		p.sessionID = c.sessionID
	}
	if p.packetID == 0 {
		c.packetID++
		p.packetID = c.packetID
	}
	c.send(p)
	r := c.expect(typeResponse)
	if r.packetID != p.packetID || r.transactionID != p.transactionID || r.sessionID != p.sessionID {
		c.t.Fatalf("Response IDs %d/%d/%d, want %d/%d/%d", r.sessionID, r.transactionID, r.packetID,
			p.sessionID, p.transactionID, p.packetID)
	}
	if r.bigEndian() != p.bigEndian() {
		c.t.Fatalf("Response in the other byte order than the request")
	}
	return r
}

// handshake answers Open, one Register per subtree or registration and one
// AddAgentCaps per capability, checking each against cfg.
func (c *masterConn) handshake(cfg Config) {
	c.t.Helper()
	open := c.expect(typeOpen)
	if !open.id.Equal(cfg.ID) || open.descr != cfg.Description || !open.bigEndian() {
		c.t.Fatalf("Open %+v does not match %+v", *open, cfg)
	}
	c.respond(open, NoError)
	full, err := cfg.withDefaults()
	if err != nil {
		c.t.Fatal(err)
	}
	for _, g := range full.registrations() {
		reg := c.expect(typeRegister)
		if reg.sessionID != c.sessionID || !reg.subtree.Equal(g.Subtree) || reg.rangeSubID != g.RangeSubID ||
			reg.upperBound != g.UpperBound || reg.priority != g.Priority {
			c.t.Fatalf("Register %s range %d-%d priority %d in session %d, want %s priority %d in %d", reg.subtree,
				reg.rangeSubID, reg.upperBound, reg.priority, reg.sessionID, g, g.Priority, c.sessionID)
		}
		c.respond(reg, NoError)
	}
	for _, cp := range cfg.Capabilities {
		add := c.expect(typeAddAgentCaps)
		if !add.id.Equal(cp.ID) || add.descr != cp.Description {
			c.t.Fatalf("AddAgentCaps %s %q, want %s %q", add.id, add.descr, cp.ID, cp.Description)
		}
		c.respond(add, NoError)
	}
}

// logBuffer collects slog output for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) count(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.buf.String(), substr)
}

// lines returns the log lines that contain substr.
func (l *logBuffer) lines(substr string) []string {
	var out []string
	for _, line := range strings.Split(l.String(), "\n") {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return out
}

// errOf is the err= attribute of a text log line.
func errOf(line string) string {
	_, e, _ := strings.Cut(line, " err=")
	return e
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// running is a Subagent under test with its Run goroutine.
type running struct {
	sa       *Subagent
	cancel   context.CancelFunc
	done     chan error
	logs     *logBuffer
	baseline int
	within   time.Duration
	bubble   bool
	stopped  bool
}

// testConfig is a Config for the fake master with fast timers.
func testConfig(addr string) Config {
	return Config{
		Address:        addr,
		ID:             asn1tree.MustParse("1.3.6.1.4.1.32473.99"),
		Description:    "agentx test subagent",
		Subtrees:       testSubtrees,
		PingInterval:   -1,
		RequestTimeout: 2 * time.Second,
		BackoffMin:     10 * time.Millisecond,
		BackoffMax:     50 * time.Millisecond,
	}
}

// start runs a Subagent serving testTree that dials cfg.Address itself.
func start(t *testing.T, cfg Config) *running {
	t.Helper()
	return startOn(t, nil, cfg, testTree(t))
}

// start runs a Subagent serving testTree whose dials m records (and, for
// a pipe master, takes).
func (m *fakeMaster) start(cfg Config) *running {
	m.t.Helper()
	return startOn(m.t, m, cfg, testTree(m.t))
}

// startOn runs a Subagent serving view; stop (also a cleanup) cancels it,
// waits for Run and checks that no goroutine it started is left (in a
// bubble, synctest.Test checks that).
func startOn(t *testing.T, m *fakeMaster, cfg Config, view func() asn1tree.View) *running {
	t.Helper()
	return startSourceOn(t, m, cfg, asn1tree.Latest(view))
}

// startSourceOn is startOn for a Subagent made by NewWithSource.
func startSourceOn(t *testing.T, m *fakeMaster, cfg Config, src asn1tree.Source) *running {
	t.Helper()
	r := &running{done: make(chan error, 1), logs: &logBuffer{}, baseline: runtime.NumGoroutine(), within: ioTimeout}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	sa, err := NewWithSource(cfg, src)
	if err != nil {
		t.Fatal(err)
	}
	if m != nil {
		sa.dial = m.dialer(sa.dial)
		r.within, r.bubble = m.bound(), m.pipes != nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.sa, r.cancel = sa, cancel
	go func() { r.done <- sa.Run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

func (r *running) stop(t *testing.T) {
	t.Helper()
	if r.stopped {
		return
	}
	r.stopped = true
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("Run returned %v", err)
		}
	case <-time.After(r.within):
		t.Fatalf("Run did not return within %v of cancel", r.within)
	}
	if !r.bubble {
		checkGoroutines(t, r.baseline)
	}
}

// checkGoroutines waits, bounded, for the goroutine count to fall back to
// baseline and dumps the stacks when it does not.
func checkGoroutines(t *testing.T, baseline int) {
	t.Helper()
	var stacks []byte
	done := false
	defer func() {
		if !done {
			t.Logf("goroutines:\n%s", stacks)
		}
	}()
	testutil.Eventually(t, fmt.Sprintf("the goroutine count to fall back to %d", baseline), ioTimeout, func() bool {
		if runtime.NumGoroutine() <= baseline {
			return true
		}
		buf := make([]byte, 1<<16)
		stacks = buf[:runtime.Stack(buf, true)]
		return false
	})
	done = true
}

// waitFor polls cond, bounded by ioTimeout. In a bubble use settled:
// polling would move the clock.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, what, ioTimeout, cond)
}

// settled waits until every goroutine of the bubble is blocked, then
// checks cond.
func settled(t *testing.T, what string, cond func() bool) {
	t.Helper()
	synctest.Wait()
	if !cond() {
		t.Fatalf("not %s once the subagent settled", what)
	}
}
