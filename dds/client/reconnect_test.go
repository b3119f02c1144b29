package client

import (
	"testing"
	"time"

	"github.com/perfagent/subagent/dds"
	"github.com/perfagent/subagent/spmi"
)

func TestReconnectReplays(t *testing.T) {
	f := newFake(t)
	g := newGuide()
	s, _ := start(t, f, g, nil)
	b := secondOfTwoDisks(t, s, g)
	reads := b.Counter(g.reads)
	reads.Set(123)
	g.gadgets.Set(5)
	gen := f.inits[0].Generation
	f.drop()
	time.Sleep(10 * time.Millisecond)
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	n, in := len(f.inits), f.inits[len(f.inits)-1]
	f.mu.Unlock()
	if n != 2 || in.Generation == gen {
		t.Fatalf("%d inits, generation %#x", n, in.Generation)
	}
	if b.Offset() != 32 { // the new daemon packs the live instance first
		t.Fatalf("replayed slot %d", b.Offset())
	}
	if v := f.read(&in.Templates[0].Stats[0], b.Offset()); v.Float64() != 123 {
		t.Fatalf("value not carried over: %v", v)
	}
	reads.Add(1)
	if v := f.read(&in.Templates[0].Stats[0], 32); v.Float64() != 124 {
		t.Fatalf("handle not moved: %v", v)
	}
	if v := f.read(&in.Contexts[1].Stats[0], 0); v.Float64() != 5 {
		t.Fatalf("permanent value: %v", v)
	}
}

func TestGoAwayMeansAssumedDead(t *testing.T) {
	f := newFake(t)
	g := newGuide()
	s, _ := start(t, f, g, nil)
	dds.SetGoAway(f.mem)
	f.drop()
	if err := s.Check(); spmi.CodeOf(err) != spmi.SiAssumedDead {
		t.Fatalf("Check: %v", err)
	}
	if _, err := s.AddCx(g.disk, "DDS/IBM/x", "x", 1); spmi.CodeOf(err) != spmi.SiAssumedDead {
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
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		f.mu.Lock()
		n := len(f.inits)
		f.mu.Unlock()
		if n == 2 && s.Connected() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no re-registration: %d inits", n)
		}
	}
	if err := s.Exit(); err != nil {
		t.Fatal(err)
	}
}

func TestDelCxAfterRestartUsesNewSlot(t *testing.T) {
	f := newFake(t)
	g := newGuide()
	s, _ := start(t, f, g, nil)
	b := secondOfTwoDisks(t, s, g)
	f.drop()
	time.Sleep(10 * time.Millisecond)
	if err := s.DelCx(b); err != nil { // fails with the old offset 48
		t.Fatal(err)
	}
	if _, err := Start(g.v, "/tmp/unused.dds", nil); spmi.CodeOf(err) != spmi.SiBadArgument {
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
