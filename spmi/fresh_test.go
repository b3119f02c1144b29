package spmi

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
)

// clockProvider serves one context whose counter is the number of its
// collections; a collection takes took on the bubble's clock.
type clockProvider struct {
	name  string
	asn   uint32
	took  time.Duration
	calls atomic.Int64
	gate  chan struct{} // when set, a collection waits for it
}

func (p *clockProvider) Name() string { return p.name }
func (p *clockProvider) Collect(b *Builder) error {
	n := p.calls.Add(1)
	if p.gate != nil {
		<-p.gate
	}
	time.Sleep(p.took)
	c, err := b.Context(nil, &CxDesc{Name: p.name, Descr: p.name, ASN: p.asn})
	if err != nil {
		return err
	}
	return b.Stat(c, &spmiwire.StatDesc{Name: "n", Descr: "collections", ASN: 1, Val: ddswire.SiCounter}, spmiwire.Uint(uint64(n)))
}

// value reads path through an answer, as a front end does.
func value(t *testing.T, s *Snapshot, path string) uint64 {
	t.Helper()
	it := s.Answer().Item(path)
	if it.Err != nil {
		t.Fatalf("%s: %v", path, it.Err)
	}
	return it.Value.Uint64()
}

// A request that finds the values older than MinAge waits for them to be
// read again; one within MinAge is served at once. The values served
// were read at most MinAge before the request, at any polling period.
func TestRequestsWaitForFreshValues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cpu := &clockProvider{name: "CPU", asn: 1, took: 3 * time.Millisecond}
		h := NewHierarchy(Config{Base: testBase, MinAge: time.Second})
		h.Add(cpu)
		h.Refresh()
		for _, period := range []time.Duration{100 * time.Millisecond, time.Second, 6 * time.Second, 300 * time.Second} {
			time.Sleep(period)
			asked := time.Now()
			s := h.FreshWithin(500 * time.Millisecond)
			if age := asked.Sub(s.Time); age >= time.Second {
				t.Errorf("polled after %v: values %v old", period, age)
			}
			if period >= time.Second && time.Since(asked) != cpu.took {
				t.Errorf("polled after %v: waited %v, want the reading's %v", period, time.Since(asked), cpu.took)
			}
			if period < time.Second && time.Since(asked) != 0 {
				t.Errorf("polled after %v (within MinAge): waited %v", period, time.Since(asked))
			}
		}
	})
}

// A context with its own age (Proc) is read apart: requests never wait
// for it, and while it is read it is kept that fresh in the background
// (Run); a first read after it went cold starts a reading.
func TestContextsWithTheirOwnAgeAreReadApart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cpu := &clockProvider{name: "CPU", asn: 1, took: 2 * time.Millisecond}
		proc := &clockProvider{name: "Proc", asn: 7, took: 270 * time.Millisecond}
		h := NewHierarchy(Config{Base: testBase, MinAge: time.Second,
			MaxAge: map[string]time.Duration{"Proc": 5 * time.Second}, WarmFor: time.Minute})
		h.Add(cpu)
		h.Add(proc)
		h.Refresh()
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { h.Run(ctx, 30*time.Second) })
		defer wg.Wait()
		defer cancel()

		// Polled every 2 s for 40 s: no request waits for Proc, and the
		// Proc values served are never older than its age plus a reading.
		for range 20 {
			time.Sleep(2 * time.Second)
			asked := time.Now()
			s := h.FreshWithin(500 * time.Millisecond)
			if w := time.Since(asked); w > cpu.took {
				t.Fatalf("a request waited %v (Proc takes %v)", w, proc.took)
			}
			r := s.Answer()
			r.Item("Proc/n")
			if age := asked.Sub(r.DataTime()); age > 5*time.Second+proc.took {
				t.Fatalf("Proc values %v old", age)
			}
		}
		// About one reading per 5 s while read, not one per request.
		if n := proc.calls.Load(); n < 7 || n > 10 {
			t.Errorf("%d readings of Proc in 40 s, want about 8", n)
		}
		// Unread for longer than WarmFor it is read at the periodic
		// refresh only.
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		before := proc.calls.Load()
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if n := proc.calls.Load() - before; n != 4 {
			t.Errorf("%d readings of a cold Proc in 2 minutes, want 4 (every 30 s)", n)
		}
		// A read of the cold part is served at once and starts a reading.
		time.Sleep(10 * time.Second)
		before = proc.calls.Load()
		asked := time.Now()
		h.FreshWithin(500 * time.Millisecond).Answer().Item("Proc/n")
		if w := time.Since(asked); w > cpu.took {
			t.Fatalf("the cold read waited %v", w)
		}
		synctest.Wait()
		time.Sleep(proc.took)
		synctest.Wait()
		if n := proc.calls.Load() - before; n != 1 {
			t.Errorf("a cold read started %d readings, want 1", n)
		}
		r := h.Current().Answer()
		r.Item("Proc/n")
		if age := time.Since(r.DataTime()); age > proc.took {
			t.Errorf("after the cold read Proc is %v old", age)
		}
	})
}

// A part whose structure changed (a supplier registered) is rebuilt apart:
// a request is answered from the old one meanwhile; Fresh (the control
// socket's readers) waits for it.
func TestStructuralRebuildsAreNotWaitedForBySNMP(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cpu := &clockProvider{name: "CPU", asn: 1, took: 2 * time.Millisecond}
		dds := &gated{shaped: &shaped{live100k: newLive100k(), shape: 1}}
		h := NewHierarchy(Config{Base: testBase, MinAge: time.Second})
		h.Add(cpu)
		h.Add(dds)
		first := h.Refresh()
		gate := make(chan struct{})
		dds.gate = gate
		dds.shape = 2
		time.Sleep(time.Second)
		asked := time.Now()
		s := h.FreshWithin(500 * time.Millisecond)
		if w := time.Since(asked); w != cpu.took {
			t.Fatalf("the request waited %v, want the cheap reading's %v", w, cpu.took)
		}
		if s == first || value(t, s, "CPU/n") != 2 {
			t.Fatal("the cheap values were not read again")
		}
		if s.parts[1] != first.parts[1] {
			t.Fatal("the request waited for the rebuild")
		}
		got := make(chan *Snapshot)
		go func() { got <- h.Fresh() }()
		synctest.Wait()
		select {
		case <-got:
			t.Fatal("Fresh did not wait for the rebuild")
		default:
		}
		close(gate)
		if s := <-got; s.parts[1].shape != 2 {
			t.Fatalf("Fresh returned shape %v", s.parts[1].shape)
		}
		time.Sleep(returnFor + returnEvery) // the memory returner's loop ends
	})
}

// Providers that add to the same top-level context (RTime/ARM and RTime)
// are read together into one part.
func TestProvidersOfOneContextShareAPart(t *testing.T) {
	h := NewHierarchy(Config{Base: testBase})
	rtCx := &CxDesc{Name: "RTime", Descr: "Response time", ASN: 13}
	add := func(name, sub string, asn uint32) {
		h.Add(namedFunc{name, func(b *Builder) error {
			rt := b.Lookup("RTime")
			if rt == nil {
				var err error
				if rt, err = b.Context(nil, rtCx); err != nil {
					return err
				}
			}
			c, err := b.Context(rt, &CxDesc{Name: sub, Descr: sub, ASN: asn})
			if err != nil {
				return err
			}
			return b.Stat(c, &spmiwire.StatDesc{Name: "x", Descr: "x", ASN: 1, Val: ddswire.SiQuantity}, spmiwire.Uint(uint64(asn)))
		}})
	}
	add("RTime/ARM", "ARM", 1)
	add("RTime", "LAN", 2)
	s := h.Refresh()
	if len(s.Failures) != 0 || len(s.parts) != 1 {
		t.Fatalf("failures %v, %d parts", s.Failures, len(s.parts))
	}
	if value(t, s, "RTime/ARM/x") != 1 || value(t, s, "RTime/LAN/x") != 2 {
		t.Fatal("RTime/ARM or RTime/LAN missing")
	}
}

// gated is shaped with a collection that waits for gate when set.
type gated struct {
	*shaped
	gate chan struct{}
}

func (g *gated) Collect(b *Builder) error {
	if g.gate != nil {
		<-g.gate
	}
	return g.shaped.Collect(b)
}

type namedFunc struct {
	name string
	f    func(b *Builder) error
}

func (n namedFunc) Name() string             { return n.name }
func (n namedFunc) Collect(b *Builder) error { return n.f(b) }

// A supplier that registers within MinAge of the last reading is seen by
// the next Fresh (the control socket's readers), which rebuilds the part
// whose shape changed and waits for it.
func TestFreshSeesANewShapeWithinMinAge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dds := &shaped{live100k: newLive100k(), shape: 1}
		h := NewHierarchy(Config{Base: testBase, MinAge: time.Hour})
		h.Add(&clockProvider{name: "CPU", asn: 1})
		h.Add(dds)
		first := h.Refresh()
		dds.shape = 2
		if s := h.FreshWithin(500 * time.Millisecond); s != first {
			t.Fatal("an SNMP request within MinAge did more than serve the snapshot")
		}
		if s := h.Fresh(); s.parts[1].shape != 2 {
			t.Fatalf("Fresh served shape %v, want the new 2", s.parts[1].shape)
		}
		time.Sleep(returnFor + returnEvery) // the memory returner's loop ends
	})
}

// A rebuild under way read the shape before a later change (a supplier
// left while it ran): Fresh waits for it and then for a rebuild of the
// new shape, so that a reader asking after the change never sees what
// went.
func TestFreshWaitsPastARebuildOfAnOlderShape(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dds := &gated{shaped: &shaped{live100k: newLive100k(), shape: 1}}
		h := NewHierarchy(Config{Base: testBase, MinAge: time.Hour})
		h.Add(dds)
		h.Refresh()
		gate := make(chan struct{})
		dds.gate = gate
		dds.shape = 2 // registered: a rebuild starts and waits at the gate
		go h.Fresh()
		synctest.Wait()
		dds.shape = 0 // and left while that rebuild ran
		got := make(chan *Snapshot)
		go func() { got <- h.Fresh() }()
		synctest.Wait()
		dds.gate = nil
		close(gate)
		if s := <-got; s.parts[0].shape != 0 || s.NumStats != 0 {
			t.Fatalf("Fresh after the supplier left served shape %v with %d statistics", s.parts[0].shape, s.NumStats)
		}
		time.Sleep(returnFor + returnEvery) // the memory returner's loop ends
	})
}

// A context read apart is read again every 20 times its reading's
// duration, from MinAge to its MaxAge: cheap on this host it is as fresh
// as MinAge allows, costly it takes at most 5 % of a core.
func TestApartAgeFollowsTheReadingsCost(t *testing.T) {
	for _, c := range []struct {
		took, want time.Duration
	}{{10 * time.Millisecond, time.Second}, {250 * time.Millisecond, 5 * time.Second}, {2 * time.Second, 30 * time.Second}} {
		synctest.Test(t, func(t *testing.T) {
			proc := &clockProvider{name: "Proc", asn: 7, took: c.took}
			h := NewHierarchy(Config{Base: testBase, MinAge: time.Second, MaxAge: map[string]time.Duration{"Proc": 30 * time.Second}})
			h.Add(proc)
			h.Refresh()
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			wg.Go(func() { h.Run(ctx, time.Hour) })
			defer wg.Wait()
			defer cancel()
			var ages []time.Duration
			for range 4 * int(c.want/time.Second) {
				time.Sleep(time.Second)
				r := h.FreshWithin(0).Answer()
				r.Item("Proc/n")
				ages = append(ages, time.Since(r.DataTime()))
			}
			if a := h.Ages(time.Now()); len(a) != 1 || a[0].MaxAge != c.want || !a[0].Apart {
				t.Errorf("a reading of %v: ages %+v, want MaxAge %v", c.took, a, c.want)
			}
			if worst := slices.Max(ages); worst > c.want+c.took {
				t.Errorf("a reading of %v: values up to %v old, want at most %v", c.took, worst, c.want+c.took)
			}
			if n := proc.calls.Load(); n < 4 || n > 6 {
				t.Errorf("a reading of %v: %d readings in 4 ages, want about 4", c.took, n)
			}
			cancel()
			time.Sleep(c.took) // a reading under way ends
		})
	}
}

// flipping is a stable provider whose shape is the number it serves;
// it changes between readings, as a supplier that registers and leaves.
type flipping struct{ shape atomic.Int64 }

func (p *flipping) Name() string { return "DDS" }
func (p *flipping) Shape() any   { return p.shape.Load() }
func (p *flipping) Collect(b *Builder) error {
	c, err := b.Context(nil, &CxDesc{Name: "DDS", Descr: "DDS", ASN: 99})
	if err != nil {
		return err
	}
	return b.Stat(c, &spmiwire.StatDesc{Name: "shape", Descr: "the shape read", ASN: 1, Val: ddswire.SiQuantity}, spmiwire.Uint(uint64(p.shape.Load())))
}

// The reading Fresh starts rebuilds a changed shape apart; that rebuild
// may publish after the reading and end before Fresh looks for rebuilds
// under way (another core runs it). Fresh serves it all the same, never
// the snapshot of the shape before. Many rounds, since the rebuild wins
// that race only now and then (on the old Fresh, within 3,000 rounds).
func TestFreshServesARebuildThatEndedAtOnce(t *testing.T) {
	p := &flipping{}
	h := NewHierarchy(Config{Base: testBase, MinAge: time.Nanosecond})
	h.Add(p)
	h.Refresh()
	for i := range 3000 {
		want := uint64(i + 1)
		p.shape.Store(int64(want))
		if got := value(t, h.Fresh(), "DDS/shape"); got != want {
			t.Fatalf("round %d: Fresh after a change of shape served %d, want %d", i, got, want)
		}
	}
}
