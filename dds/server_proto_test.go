//go:build linux

package dds

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/ddswire/ddswiretest"
	"github.com/perfagent/subagent/client/spmierr"
)

func TestServerStaleSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dds.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewServer(ServerConfig{Socket: path}); err == nil {
		t.Fatal("took over a live socket")
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	s, err := NewServer(ServerConfig{Socket: path})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o660 {
		t.Fatalf("socket mode %v, %v", fi.Mode(), err)
	}
	if _, err := NewServer(ServerConfig{Socket: path, StampTimeout: time.Second}); err == nil {
		t.Fatal("stamp timeout under 15 s accepted")
	}
}

func TestServerIntervalAndShutdown(t *testing.T) {
	clk := newTestClock()
	s, h := testServer(t, func(s *Server) { s.reg.now = clk.now })
	ts := newSupFile(t, ddswiretest.GuideInit())
	ts.register(s, spmierr.SiSuccess)
	readAll(t, h, "DDS/IBM/Test/gadgets")
	clk.advance(120 * time.Millisecond)
	readAll(t, h, "DDS/IBM/Test/gadgets")
	hd := ddswire.DecodeHeader(ts.mem)
	if hd.Subscrib != 4 || hd.Interval != 120 {
		t.Fatalf("SiShSubscrib %d, SiShInterval %d; want 4 and 120 (ms between the reads)", hd.Subscrib, hd.Interval)
	}
	s.Close()
	ts.waitEOF()
	if g, _ := ddswire.LoadGoAway(ts.mem); g {
		t.Fatal("SiShGoAway set on the daemon's own shutdown")
	}
	if lookup(h, "DDS/IBM/") != nil {
		t.Fatal("served after Close")
	}
}

func TestServerBadFrame(t *testing.T) {
	s, _ := testServer(t, nil)
	ts := newSupFile(t, ddswiretest.GuideInit())
	ts.dial(s)
	ts.c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := ts.c.Write([]byte{1, 0, 0, 0, 0x7f, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	m, err := ddswire.ReadMessage(ts.c, ddswire.Limits{})
	if err != nil || m.(*ddswire.Reply).Errno != spmierr.SiBadArgument {
		t.Fatalf("got %v, %v; want a SiBadArgument reply", m, err)
	}
	ts.waitEOF()

	// A frame started but never finished is dropped after IOTimeout.
	ts.dial(s)
	if _, err := ts.c.Write([]byte{100, 0, 0, 0, 1, 0, 0, 0, 1}); err != nil {
		t.Fatal(err)
	}
	ts.waitEOF()
}

func TestServerSupplierLimit(t *testing.T) {
	s, h := testServer(t, func(s *Server) { s.reg.maxSup = 1 })
	a := newSupFile(t, ddswiretest.GuideInit())
	a.register(s, spmierr.SiSuccess)
	b := newSupFile(t, otherInit("DDS/IBM/Other", 230))
	b.register(s, spmierr.SiCallocFailed)
	if lookup(h, "DDS/IBM/Other/") != nil {
		t.Fatal("supplier over the limit served")
	}
}

func TestServerProtocolRefusals(t *testing.T) {
	s, h := testServer(t, nil)
	ts := newSupFile(t, ddswiretest.GuideInit())
	ts.dial(s)
	in := *ts.init
	in.Version = 2
	ts.must(&in, int(ts.f.Fd()), spmierr.SiInitFailed)
	ts.waitEOF()

	// A descriptor on a frame other than the Init closes the connection.
	ts.register(s, spmierr.SiSuccess)
	ts.must(&ddswire.DelCx{Offset: 32}, int(ts.f.Fd()), spmierr.SiShmemFailed)
	ts.waitEOF()
	eventually(t, "removed", func() bool { return lookup(h, "DDS/IBM/") == nil })

	// AddCx directly under the vendor context, then DelCx.
	ts = newSupFile(t, ddswiretest.GuideInit())
	ts.register(s, spmierr.SiSuccess)
	r := ts.must(&ddswire.AddCx{Ix: 0, Path: "DDS/IBM/Top1", Descr: "inst", ASN: 500}, -1, spmierr.SiSuccess)
	if lookup(h, "DDS/IBM/Top1/problems") == nil {
		t.Fatal("AddCx under the vendor context not served")
	}
	ts.must(&ddswire.DelCx{Offset: uint32(r.Value)}, -1, spmierr.SiSuccess)
	if lookup(h, "DDS/IBM/Top1/") != nil {
		t.Fatal("still served after DelCx")
	}
}
