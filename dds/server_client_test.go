//go:build linux

package dds

import (
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/ddswire/ddswiretest"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/spmi"
)

// testServer starts a Server on a socket in a temp dir; mod may adjust
// the configuration and the server before it serves.
func testServer(t *testing.T, mod func(*Server)) (*Server, *spmi.Hierarchy) {
	t.Helper()
	s, err := NewServer(ServerConfig{Socket: filepath.Join(t.TempDir(), "dds.sock"), IOTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s.tick = 20 * time.Millisecond
	if mod != nil {
		mod(s)
	}
	served := make(chan struct{})
	go func() { s.Serve(); close(served) }()
	t.Cleanup(func() {
		s.Close()
		select {
		case <-served:
		case <-time.After(time.Minute):
			t.Error("Serve did not return")
		}
	})
	h := spmi.NewHierarchy(spmi.Config{Base: asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1}})
	h.Add(s.Provider())
	return s, h
}

// testClock is a time the test sets (registry.now).
type testClock struct{ ns atomic.Int64 }

func newTestClock() *testClock {
	c := &testClock{}
	c.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *testClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *testClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// testSup is a supplier speaking the protocol with the codec.
type testSup struct {
	t    *testing.T
	c    *net.UnixConn
	f    *os.File
	mem  []byte
	init *ddswire.Init
}

var genSeq atomic.Uint64

// newSupFile creates the shared file for in (its File and Generation are
// set here) and maps it as the supplier would.
func newSupFile(t *testing.T, in *ddswire.Init) *testSup {
	t.Helper()
	in.File = filepath.Join(t.TempDir(), "shm")
	in.Generation = 0x5eed0000 + genSeq.Add(1)
	f, err := os.OpenFile(in.File, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	size := ddswire.HeaderSize + int(in.AreaLen)
	if err := f.Truncate(int64(size)); err != nil {
		t.Fatal(err)
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(mem) })
	pid := int32(os.Getpid())
	h := ddswire.NewHeader(in.AreaLen, in.PermLen, pid, ddswire.ProcStart(pid), in.File)
	h.Encode(mem)
	if err := ddswire.StoreGen(mem, in.Generation); err != nil {
		t.Fatal(err)
	}
	return &testSup{t: t, f: f, mem: mem, init: in}
}

func (ts *testSup) dial(s *Server) {
	ts.t.Helper()
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: s.cfg.Socket, Net: "unix"})
	if err != nil {
		ts.t.Fatal(err)
	}
	ts.t.Cleanup(func() { c.Close() })
	ts.c = c
}

// send writes m (with fd attached if fd >= 0) and reads the reply.
func (ts *testSup) send(m ddswire.Message, fd int) (*ddswire.Reply, error) {
	ts.c.SetDeadline(time.Now().Add(5 * time.Second))
	if err := ddswire.WriteMessageFD(ts.c, m, fd, ddswire.Limits{}); err != nil {
		return nil, err
	}
	r, err := ddswire.ReadMessage(ts.c, ddswire.Limits{})
	if err != nil {
		return nil, err
	}
	return r.(*ddswire.Reply), nil
}

// must sends m and fails unless the reply has code want.
func (ts *testSup) must(m ddswire.Message, fd int, want spmierr.Code) *ddswire.Reply {
	ts.t.Helper()
	r, err := ts.send(m, fd)
	if err != nil {
		ts.t.Fatalf("%v: %v", m.Type(), err)
	}
	if r.Errno != want {
		ts.t.Fatalf("%v: got %v %q, want %v", m.Type(), r.Errno, r.Errmsg, want)
	}
	return r
}

// register dials and sends the Init with the file's descriptor.
func (ts *testSup) register(s *Server, want spmierr.Code) *ddswire.Reply {
	ts.t.Helper()
	ts.dial(s)
	return ts.must(ts.init, int(ts.f.Fd()), want)
}

// put stores v at area offset off (8-byte field).
func (ts *testSup) put(off uint32, v uint64) {
	ddswiretest.LE.PutUint64(ts.mem[ddswire.HeaderSize+int(off):], v)
}

// waitEOF waits until the daemon closes the connection.
func (ts *testSup) waitEOF() {
	ts.t.Helper()
	ts.c.SetReadDeadline(time.Now().Add(time.Minute))
	if _, _, err := ddswire.ReadFrame(ts.c, ddswire.Limits{}); err == nil {
		ts.t.Fatal("unexpected frame, want EOF")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		ts.t.Fatal("connection not closed")
	}
}

// lookup returns the node at path in a fresh snapshot, nil if absent.
func lookup(h *spmi.Hierarchy, path string) *spmi.Node {
	n, _ := h.Refresh().Lookup(path)
	return n
}

// eventually polls cond for up to 5 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, what, time.Minute, cond)
}
