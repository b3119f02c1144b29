//go:build linux

package dds

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/ddswire/ddswiretest"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/spmi"
)

func wantNode(t *testing.T, h *spmi.Hierarchy, path, rel string, val uint64) {
	t.Helper()
	n := lookup(h, path)
	if n == nil {
		t.Fatalf("%s: not in the tree", path)
	}
	if n.Rel.String() != rel {
		t.Fatalf("%s: relative id %s, want %s", path, n.Rel, rel)
	}
	if v := n.Current(); !v.OK() || v.Uint64() != val {
		t.Fatalf("%s: value %v, want %d", path, v, val)
	}
}

func TestServerGuideSample(t *testing.T) {
	s, h := testServer(t, nil)
	ts := newSupFile(t, ddswiretest.GuideInit())
	if r := ts.register(s, spmierr.SiSuccess); r.Value == 0 {
		t.Fatal("registration number 0")
	}
	ts.put(0, 42)
	ts.put(8, 7)
	ts.put(16, 5)
	ts.put(24, 9)
	wantNode(t, h, "DDS/IBM/Test/gadgets", "99.2.220.1", 42)
	wantNode(t, h, "DDS/IBM/Test/widgets", "99.2.220.2", 7)
	wantNode(t, h, "DDS/IBM/Moretest/SubTest/level", "99.2.221.222.1", 5)
	wantNode(t, h, "DDS/IBM/Moretest/SubTest/queue", "99.2.221.222.2", 9)
	ts.put(0, 43)
	wantNode(t, h, "DDS/IBM/Test/gadgets", "99.2.220.1", 43)

	// AddCx: the slot is zeroed before it is visible.
	for off := uint32(32); off < 64; off += 8 {
		ts.put(off, 0xdead)
	}
	r := ts.must(&ddswire.AddCx{Ix: 0, Path: "DDS/IBM/Moretest/INST1", Descr: "inst", ASN: 215}, -1, spmierr.SiSuccess)
	slot := uint32(r.Value)
	if slot < 32 || slot%8 != 0 {
		t.Fatalf("slot offset %d", slot)
	}
	wantNode(t, h, "DDS/IBM/Moretest/INST1/solutions", "99.2.221.215.2", 0)
	ts.put(slot+8, 77)
	wantNode(t, h, "DDS/IBM/Moretest/INST1/solutions", "99.2.221.215.2", 77)
	ts.must(&ddswire.AddCx{Ix: 0, Path: "DDS/IBM/Moretest/INST2", Descr: "inst", ASN: 215}, -1, spmierr.SiDuplicate)
	ts.must(&ddswire.AddCx{Ix: 0, Path: "DDS/IBM/Moretest/SubTest", Descr: "inst", ASN: 300}, -1, spmierr.SiDuplicate)
	ts.must(&ddswire.AddCx{Ix: 0, Path: "DDS/IBM/Nowhere/X", Descr: "inst", ASN: 300}, -1, spmierr.SiInvalidCx)
	ts.must(&ddswire.AddCx{Ix: 0, Path: "DDS/Other/X", Descr: "inst", ASN: 300}, -1, spmierr.SiBadArgument)
	ts.must(&ddswire.AddCx{Ix: 5, Path: "DDS/IBM/X", Descr: "inst", ASN: 300}, -1, spmierr.SiBadArgument)

	// DelCx: gone at the next refresh; a second delete finds nothing.
	ts.must(&ddswire.DelCx{Offset: slot}, -1, spmierr.SiSuccess)
	if lookup(h, "DDS/IBM/Moretest/INST1/") != nil {
		t.Fatal("INST1 still served after DelCx")
	}
	ts.must(&ddswire.DelCx{Offset: slot}, -1, spmierr.SiNotFound)
	ts.must(&ddswire.Init{Version: 1}, -1, spmierr.SiBadArgument) // second Init: kept

	ts.must(&ddswire.Exit{}, -1, spmierr.SiSuccess)
	if lookup(h, "DDS/IBM/") != nil {
		t.Fatal("DDS/IBM still served after Exit")
	}
	if g, _ := ddswire.LoadGoAway(ts.mem); g {
		t.Fatal("SiShGoAway set on an orderly Exit")
	}
	ts.waitEOF()
	if lookup(h, "DDS/") == nil {
		t.Fatal("the DDS context itself must stay")
	}
}

// otherInit is a second IBM supplier with its own context.
func otherInit(path string, asn uint32) *ddswire.Init {
	return &ddswire.Init{Version: 1, AreaLen: 64, PermLen: 8, Contexts: []ddswire.Cx{
		{Path: "DDS/IBM", Descr: "IBM", ASN: 2},
		{Path: path, Descr: "other", ASN: asn, Stats: []ddswire.Stat{
			{Name: "n", Descr: "a number", Max: 10, DataType: ddswire.SiLong, ASN: 1, Size: 8, Type: ddswire.SiULong},
		}},
	}}
}

func TestServerSharedVendor(t *testing.T) {
	s, h := testServer(t, nil)
	a := newSupFile(t, ddswiretest.GuideInit())
	a.register(s, spmierr.SiSuccess)
	b := newSupFile(t, otherInit("DDS/IBM/Other", 230))
	b.register(s, spmierr.SiSuccess)
	b.put(0, 3)
	wantNode(t, h, "DDS/IBM/Other/n", "99.2.230.1", 3)

	// A vendor context under another number, or a clashing number.
	c := newSupFile(t, otherInit("DDS/IBM/Third", 231))
	c.init.Contexts[0].ASN = 3
	c.register(s, spmierr.SiDuplicate)
	d := newSupFile(t, otherInit("DDS/IBM/Fourth", 220))
	d.register(s, spmierr.SiDuplicate)

	// A supplier only touches its own contexts.
	a.must(&ddswire.AddCx{Ix: 0, Path: "DDS/IBM/Other/X", Descr: "x", ASN: 9}, -1, spmierr.SiBadArgument)

	a.c.Close() // EOF: removed at once, SiShGoAway set
	eventually(t, "A's contexts removed", func() bool { return lookup(h, "DDS/IBM/Test/") == nil })
	if g, _ := ddswire.LoadGoAway(a.mem); !g {
		t.Fatal("SiShGoAway not set after EOF")
	}
	if lookup(h, "DDS/IBM/Other/n") == nil {
		t.Fatal("B's context went with A")
	}
	b.c.Close()
	eventually(t, "DDS/IBM removed", func() bool { return lookup(h, "DDS/IBM/") == nil })
}

func TestServerDuplicateAppliesNothing(t *testing.T) {
	s, h := testServer(t, nil)
	a := newSupFile(t, ddswiretest.GuideInit())
	a.register(s, spmierr.SiSuccess)
	in := otherInit("DDS/IBM/Fresh", 240)
	in.Contexts = append(in.Contexts, ddswire.Cx{Path: "DDS/IBM/Test", Descr: "dup", ASN: 241})
	b := newSupFile(t, in)
	b.register(s, spmierr.SiDuplicate)
	b.waitEOF()
	if lookup(h, "DDS/IBM/Fresh/") != nil {
		t.Fatal("half-applied registration")
	}
	a.must(&ddswire.Exit{}, -1, spmierr.SiSuccess)
	if lookup(h, "DDS/IBM/") != nil {
		t.Fatal("vendor context kept by a refused registration")
	}
}

// A supplier whose SiShT stays as it was for longer than the stamp
// timeout is removed (and told SiShGoAway); one that stamps is kept. The
// test runs the liveness checks on its clock (the ticker never fires).
func TestServerStaleStamp(t *testing.T) {
	clk := newTestClock()
	s, h := testServer(t, func(s *Server) { s.timeout, s.tick, s.reg.now = 300*time.Millisecond, time.Hour, clk.now })
	dead := newSupFile(t, ddswiretest.GuideInit())
	dead.register(s, spmierr.SiSuccess)
	live := newSupFile(t, otherInit("DDS/IBM/Live", 250))
	live.register(s, spmierr.SiSuccess)
	check := func(stamp uint64, d time.Duration) {
		ddswiretest.LE.PutUint64(live.mem[ddswire.OffT:], stamp) // gettimeofday, as far as the daemon cares
		clk.advance(d)
		s.checkSuppliers(clk.now())
	}
	for i := range uint64(3) {
		check(i+1, 100*time.Millisecond)
	}
	if lookup(h, "DDS/IBM/Test/") == nil {
		t.Fatal("removed with its stamp unchanged for the timeout exactly, not longer")
	}
	check(4, time.Millisecond)
	if lookup(h, "DDS/IBM/Test/") != nil {
		t.Fatal("stale supplier still served")
	}
	if g, _ := ddswire.LoadGoAway(dead.mem); !g {
		t.Fatal("SiShGoAway not set")
	}
	dead.waitEOF()
	if lookup(h, "DDS/IBM/Live/n") == nil {
		t.Fatal("live supplier removed")
	}
}

func TestServerRefusesFiles(t *testing.T) {
	s, h := testServer(t, nil)
	// A symbolic link to the real file.
	ts := newSupFile(t, ddswiretest.GuideInit())
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(ts.init.File, link); err != nil {
		t.Fatal(err)
	}
	ts.init.File = link
	ts.register(s, spmierr.SiShmemFailed)
	ts.waitEOF()

	// A path naming another file than the descriptor.
	other := newSupFile(t, ddswiretest.GuideInit())
	ts = newSupFile(t, ddswiretest.GuideInit())
	ts.init.File = other.init.File
	ts.register(s, spmierr.SiShmemFailed)

	// No descriptor at all; a request before Init.
	ts = newSupFile(t, ddswiretest.GuideInit())
	ts.dial(s)
	ts.must(ts.init, -1, spmierr.SiShmemFailed)
	ts.dial(s)
	ts.must(&ddswire.AddCx{Path: "DDS/IBM/X"}, -1, spmierr.SiNotInit)
	if lookup(h, "DDS/IBM/") != nil {
		t.Fatal("a refused supplier is served")
	}
}

// A file owned by someone else is refused, naming the owner. Giving a
// file away needs root: like the other root tests, this fails (never
// skips) without it.
func TestServerRefusesAnotherUsersFile(t *testing.T) {
	testutil.RequireRoot(t)
	s, _ := testServer(t, nil)
	ts := newSupFile(t, ddswiretest.GuideInit())
	if err := os.Chown(ts.init.File, 12345, 12345); err != nil {
		t.Fatal(err)
	}
	r := ts.register(s, spmierr.SiShmemFailed)
	if want := "owned by uid 12345"; !contains(r.Errmsg, want) {
		t.Fatalf("%q does not say %q", r.Errmsg, want)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestServerTruncatedFile(t *testing.T) {
	s, h := testServer(t, func(s *Server) { s.tick = time.Hour }) // removal by Collect's notice
	ts := newSupFile(t, ddswiretest.GuideInit())
	ts.register(s, spmierr.SiSuccess)
	ts.put(0, 1)
	wantNode(t, h, "DDS/IBM/Test/gadgets", "99.2.220.1", 1)
	if err := ts.f.Truncate(0); err != nil {
		t.Fatal(err)
	}
	snap := h.Refresh()
	n, err := snap.Lookup("DDS/IBM/Test/gadgets")
	if err == nil && n.Current().OK() {
		t.Fatal("value read from a truncated file")
	}
	eventually(t, "faulted supplier removed", func() bool { return lookup(h, "DDS/IBM/") == nil })
	ts.waitEOF()
}
