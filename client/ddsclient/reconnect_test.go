package ddsclient

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/testutil"
)

// After a daemon restart the live instance comes back at its own slot,
// although a deleted one left a hole before it: the replayed AddCx asks
// for the old offset, so handles and values stay where they are.
func TestReconnectReplays(t *testing.T) {
	f := newFake(t)
	g := newGuide()
	s, _ := start(t, f, g, nil)
	b := secondOfTwoDisks(t, s, g)
	reads := b.Counter(g.reads)
	reads.Set(123)
	g.gadgets.Set(5)
	gen, off := f.inits[0].Generation, b.Offset()
	if off != 48 {
		t.Fatalf("sdb at %d before the restart", off)
	}
	f.drop()
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	n, in, last := len(f.inits), f.inits[len(f.inits)-1], f.got[len(f.got)-1]
	f.mu.Unlock()
	if n != 2 || in.Generation == gen {
		t.Fatalf("%d inits, generation %#x", n, in.Generation)
	}
	if a, ok := last.(*ddswire.AddCx); !ok || a.Path != "DDS/IBM/sdb" || a.Offset != 48 {
		t.Fatalf("replayed %+v, want sdb asking for 48", last)
	}
	if b.Offset() != off {
		t.Fatalf("replayed slot %d, was %d", b.Offset(), off)
	}
	if v := f.read(&in.Templates[0].Stats[0], off); v.Float64() != 123 {
		t.Fatalf("value not carried over: %v", v)
	}
	reads.Add(1)
	if v := f.read(&in.Templates[0].Stats[0], off); v.Float64() != 124 {
		t.Fatalf("handle does not write the slot: %v", v)
	}
	if v := f.read(&in.Contexts[1].Stats[0], 0); v.Float64() != 5 {
		t.Fatalf("permanent value: %v", v)
	}
	// The hole stays free for the next instance.
	c, err := s.AddCx(g.disk, "DDS/IBM/sdc", "Disk sdc", 12)
	if err != nil || c.Offset() != 32 {
		t.Fatalf("sdc at %v, %v; the hole is at 32", c, err)
	}
}

// An instance at offset 0 (possible when there is no permanent part; 0
// cannot be asked for) comes back at 0 from first fit, here replayed
// after the others.
func TestReconnectReplaysSlotZero(t *testing.T) {
	f := newFake(t)
	v := NewVendor("IBM", "IBM-defined Dynamic Data-Suppliers", 2)
	disk := v.Template("Disk", "Disk template")
	reads := disk.Counter("reads", "Reads", 1)
	s, err := Start(v, filepath.Join(t.TempDir(), "sup.dds"), &Options{Socket: f.sock})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Exit()
	var ins []*Instance
	for i, name := range []string{"a", "b", "c"} {
		in, err := s.AddCx(disk, "DDS/IBM/"+name, name, uint32(10+i))
		if err != nil {
			t.Fatal(err)
		}
		in.Counter(reads).Set(uint64(100 + i))
		ins = append(ins, in)
	}
	if ins[0].Offset() != 0 {
		t.Fatalf("first slot at %d: the test needs an empty permanent part", ins[0].Offset())
	}
	// Delete a and add it again: it takes slot 0 but is last in add order.
	if err := s.DelCx(ins[0]); err != nil {
		t.Fatal(err)
	}
	a, err := s.AddCx(disk, "DDS/IBM/a", "a", 10)
	if err != nil || a.Offset() != 0 {
		t.Fatalf("a again at %v, %v", a, err)
	}
	a.Counter(reads).Set(7)
	f.drop()
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	in := f.inits[len(f.inits)-1]
	f.mu.Unlock()
	for want, x := range map[uint64]*Instance{7: a, 101: ins[1], 102: ins[2]} {
		if v := f.read(&in.Templates[0].Stats[0], x.Offset()); v.Uint64() != want {
			t.Fatalf("%s at %d: %v, want %d", x.Path(), x.Offset(), v, want)
		}
	}
}

// A daemon that refuses a replayed instance ends the registration, as in
// the C library: SiShGoAway, SiAssumedDead now and later, no new Init.
func TestReplayRefusedGivesUp(t *testing.T) {
	f := newFake(t)
	g := newGuide()
	s, _ := start(t, f, g, nil)
	b := secondOfTwoDisks(t, s, g)
	f.mu.Lock()
	f.addErr = spmierr.Errorf(spmierr.SiCallocFailed, "requested slot offset 48 (16 bytes) overlaps a slot in use")
	f.mu.Unlock()
	f.drop()
	err := s.Check()
	wantSub(t, err, spmierr.SiAssumedDead, "DDS/IBM/sdb", "slot at 48", "refused it: requested slot offset 48", "call Exit")
	if !s.GoAway() || s.Connected() {
		t.Fatalf("GoAway %v, connected %v after giving up", s.GoAway(), s.Connected())
	}
	if err := s.DelCx(b); spmierr.CodeOf(err) != spmierr.SiAssumedDead {
		t.Fatalf("DelCx after giving up: %v", err)
	}
	f.mu.Lock()
	n := len(f.inits)
	f.mu.Unlock()
	if n != 2 {
		t.Fatalf("%d inits: re-registered after giving up", n)
	}
}

// wantSub fails unless err has SPMI code c and mentions every one of subs.
func wantSub(t *testing.T, err error, c spmierr.Code, subs ...string) {
	t.Helper()
	if spmierr.CodeOf(err) != c {
		t.Fatalf("got %v, want code %v", err, c)
	}
	for _, sub := range subs {
		if !strings.Contains(err.Error(), sub) {
			t.Fatalf("error %q does not mention %q", err, sub)
		}
	}
}

func TestGoAwayMeansAssumedDead(t *testing.T) {
	f := newFake(t)
	g := newGuide()
	s, _ := start(t, f, g, nil)
	ddswire.SetGoAway(f.mem)
	f.drop()
	if err := s.Check(); spmierr.CodeOf(err) != spmierr.SiAssumedDead {
		t.Fatalf("Check: %v", err)
	}
	if _, err := s.AddCx(g.disk, "DDS/IBM/x", "x", 1); spmierr.CodeOf(err) != spmierr.SiAssumedDead {
		t.Fatalf("AddCx: %v", err)
	}
	if len(f.inits) != 1 {
		t.Fatal("re-registered after GoAway")
	}
}

func TestWatchReconnects(t *testing.T) {
	f := newFake(t)
	g := newGuide()
	s, _ := start(t, f, g, &Options{Watch: 5 * time.Millisecond})
	f.drop()
	testutil.Eventually(t, "the watcher to register again", time.Minute, func() bool {
		f.mu.Lock()
		n := len(f.inits)
		f.mu.Unlock()
		return n == 2 && s.Connected()
	})
	if err := s.Exit(); err != nil {
		t.Fatal(err)
	}
}

func TestDelCxAfterRestartUsesSameSlot(t *testing.T) {
	f := newFake(t)
	g := newGuide()
	s, _ := start(t, f, g, nil)
	b := secondOfTwoDisks(t, s, g)
	f.drop()
	if err := s.DelCx(b); err != nil { // reconnects first, then deletes 48
		t.Fatal(err)
	}
	f.mu.Lock()
	last := f.got[len(f.got)-1]
	f.mu.Unlock()
	if d, ok := last.(*ddswire.DelCx); !ok || d.Offset != 48 {
		t.Fatalf("last request %+v, want DelCx of 48", last)
	}
	if _, err := Start(g.v, "/tmp/unused.dds", nil); spmierr.CodeOf(err) != spmierr.SiBadArgument {
		t.Fatalf("second Start: %v", err)
	}
}

// secondOfTwoDisks adds sda and sdb and deletes sda, so that sdb's slot is
// not the first one; it returns sdb.
func secondOfTwoDisks(t *testing.T, s *Supplier, g *guide) *Instance {
	t.Helper()
	a, _ := s.AddCx(g.disk, "DDS/IBM/sda", "Disk sda", 10)
	b, _ := s.AddCx(g.disk, "DDS/IBM/sdb", "Disk sdb", 11)
	if err := s.DelCx(a); err != nil {
		t.Fatal(err)
	}
	return b
}
