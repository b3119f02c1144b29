package agentx

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/internal/testutil"
)

// ioTimeout bounds every single wait of the fake master.
const ioTimeout = 5 * time.Second

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
// the test goroutine over a real Unix (or TCP) socket.
type fakeMaster struct {
	t    *testing.T
	ln   net.Listener
	addr string // as given to Config.Address
	path string // the socket path (Unix only)
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

// accept waits, bounded, for the subagent to connect.
func (m *fakeMaster) accept() *masterConn {
	m.t.Helper()
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
		return &masterConn{t: m.t, c: r.c, br: bufio.NewReader(r.c), sessionID: 42}
	case <-time.After(ioTimeout):
		m.ln.Close() // ends the Accept goroutine
		m.t.Fatalf("subagent did not connect within %v", ioTimeout)
		return nil
	}
}

type masterConn struct {
	t         *testing.T
	c         net.Conn
	br        *bufio.Reader
	sessionID uint32
	packetID  uint32
}

// readRaw reads one frame without decoding it.
func (c *masterConn) readRaw() []byte {
	c.t.Helper()
	c.c.SetReadDeadline(time.Now().Add(ioTimeout))
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
	c.c.SetReadDeadline(time.Now().Add(ioTimeout))
	if n, err := c.br.Read(make([]byte, 1)); err == nil {
		c.t.Fatalf("read %d more bytes, want the connection closed", n)
	}
}

func (c *masterConn) writeRaw(b []byte) {
	c.t.Helper()
	c.c.SetWriteDeadline(time.Now().Add(ioTimeout))
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

// start runs a Subagent; stop (also a cleanup) cancels it, waits for Run
// and checks that no goroutine it started is left.
func start(t *testing.T, cfg Config) *running {
	t.Helper()
	r := &running{done: make(chan error, 1), logs: &logBuffer{}, baseline: runtime.NumGoroutine()}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	sa, err := New(cfg, testTree(t))
	if err != nil {
		t.Fatal(err)
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
	case <-time.After(ioTimeout):
		t.Fatalf("Run did not return within %v of cancel", ioTimeout)
	}
	checkGoroutines(t, r.baseline)
}

// checkGoroutines waits, bounded, for the goroutine count to fall back to
// baseline and dumps the stacks when it does not.
func checkGoroutines(t *testing.T, baseline int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > baseline {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines left, %d before the subagent started:\n%s",
				runtime.NumGoroutine(), baseline, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitFor polls cond, bounded by ioTimeout.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, what, ioTimeout, cond)
}
