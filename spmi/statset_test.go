package spmi

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfagent/subagent/client/consumer"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
)

// Reads closer together than the minimum age still see a new snapshot,
// taken once the one they saw is MinAge old: elapsed is MinAge and
// counters have rates.
func TestStatSetReadsNewerThanItsPreviousRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &countingProvider{}
		h := NewHierarchy(Config{Base: testBase, MinAge: time.Second})
		h.Add(p)
		ctx := context.Background()
		ss, err := consumer.NewPathSet(ctx, h, "CPU/idle")
		if err != nil {
			t.Fatal(err)
		}
		r1, _ := ss.Read(ctx)
		for i := 0; i < 3; i++ {
			r, err := ss.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			v := r.Values[0]
			if r.Elapsed != time.Second || !v.HasRate || v.Change != 1 || !r.Time.After(r1.Time) {
				t.Fatalf("read %d: elapsed %v, %+v", i+2, r.Elapsed, v)
			}
			r1 = r
		}
		// Other readers still get the cached snapshot within the minimum age.
		calls := p.calls
		h.Fresh()
		h.Read(ctx, []string{"CPU/idle"})
		if p.calls != calls {
			t.Fatalf("Fresh refreshed within the minimum age")
		}
	})
}

func TestFreshAfterRefreshesOnlyWhenNeeded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &countingProvider{}
		h := NewHierarchy(Config{Base: testBase, MinAge: time.Hour})
		h.Add(p)
		s1 := h.Fresh()
		if s := h.FreshAfter(s1.Time.Add(-time.Nanosecond)); s != s1 || p.calls != 1 {
			t.Fatalf("a snapshot newer than asked was rebuilt (%d calls)", p.calls)
		}
		t0 := time.Now()
		s2 := h.FreshAfter(s1.Time)
		if s2 == s1 || !s2.Time.After(s1.Time) || p.calls != 2 || time.Since(t0) != time.Hour {
			t.Fatalf("FreshAfter(its own time): same snapshot %v, %d calls, after %v; want a new one after MinAge", s2 == s1, p.calls, time.Since(t0))
		}
	})
}

// No reader makes the hierarchy read more often than MinAge, whatever
// time it asks for values after (a time to come, as a hostile client may
// send): readers in parallel share the readings.
func TestFreshAfterCannotForceReadings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &countingProvider{}
		h := NewHierarchy(Config{Base: testBase, MinAge: time.Second})
		h.Add(p)
		h.Fresh()
		start := time.Now()
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 20 {
					h.FreshAfter(time.Now().Add(time.Hour))
				}
			})
		}
		wg.Wait()
		took := time.Since(start)
		if max := 1 + int(took/time.Second); p.calls > max || p.calls < 20 {
			t.Fatalf("%d readings in %v, want from 20 to %d (one per MinAge)", p.calls, took, max)
		}
	})
}

// Reads an hour apart on the bubble's clock: MinAge is an hour.
func TestStatSetAddAndDel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := NewHierarchy(Config{Base: testBase, MinAge: time.Hour})
		n := uint64(0)
		h.Add(providerFunc(func(b *Builder) error {
			n++
			c, _ := b.Context(nil, &cpuCx)
			b.Stat(c, &idle, spmiwire.Uint(1000*n))
			b.Stat(c, &spmiwire.StatDesc{Name: "user", ASN: 1, Val: ddswire.SiCounter}, spmiwire.Uint(5*n))
			return b.Stat(c, &spmiwire.StatDesc{Name: "procs", ASN: 2, Val: ddswire.SiQuantity}, spmiwire.Int(9))
		}))
		ctx := context.Background()
		ss, err := consumer.NewPathSet(ctx, h, "CPU/idle")
		if err != nil {
			t.Fatal(err)
		}
		for path, code := range map[string]spmierr.Code{"CPU/nope": spmierr.SiNotFound, "Nope/idle": spmierr.SiNotFound, "CPU/": spmierr.SiBadArgument} {
			if err := ss.Add(ctx, path); spmierr.CodeOf(err) != code || !strings.Contains(err.Error(), strings.Trim(path, "/")) {
				t.Errorf("Add(%q): %v, want %v naming the path", path, err, code)
			}
		}
		// Added again: counted (the guide's ref_count), one place in the set.
		if err := ss.Add(ctx, "/CPU/idle"); err != nil || ss.RefCount("CPU/idle") != 2 || len(ss.Paths()) != 1 {
			t.Fatalf("CPU/idle added again: %v, ref_count %d, paths %v", err, ss.RefCount("CPU/idle"), ss.Paths())
		}
		if err := ss.Add(ctx, "CPU/procs"); err != nil {
			t.Fatal(err)
		}
		if err := ss.Add(ctx, "CPU/user"); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(ss.Paths(), " "); got != "CPU/idle CPU/procs CPU/user" {
			t.Fatalf("paths %s", got)
		}
		if err := ss.Del("CPU/nope"); spmierr.CodeOf(err) != spmierr.SiNotFound || !strings.Contains(err.Error(), "CPU/nope") {
			t.Fatalf("Del of a path not in the set: %v", err)
		}
		if _, err := ss.Read(ctx); err != nil {
			t.Fatal(err)
		}
		for want := 1; want >= 0; want-- { // removed once it was removed twice
			if err := ss.Del("CPU/idle/"); err != nil || ss.RefCount("CPU/idle") != want {
				t.Fatalf("Del: %v, ref_count %d, want %d", err, ss.RefCount("CPU/idle"), want)
			}
		}
		r, err := ss.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Values) != 2 || r.Values[0].Path != "CPU/procs" || r.Values[1].Path != "CPU/user" {
			t.Fatalf("after Del: %+v", r.Values)
		}
		// CPU/user keeps its own previous value after the delete shifted it.
		if u := r.Values[1]; !u.HasRate || u.Change != 5 {
			t.Fatalf("CPU/user: %+v", u)
		}
		ss.Del("CPU/procs")
		ss.Del("CPU/user")
		if _, err := ss.Read(ctx); spmierr.CodeOf(err) != spmierr.SiBadArgument {
			t.Fatalf("read of an empty set: %v", err)
		}
	})
}

// A statistic added after a read has no previous value: no rate at the
// next read, a rate from the one after.
func TestStatSetAddedStatisticRatesFromItsSecondRead(t *testing.T) {
	src := &counterSource{t: time.Unix(0, 0)}
	ctx := context.Background()
	ss, _ := consumer.NewPathSet(ctx, src, "b")
	ss.Read(ctx)
	if err := ss.Add(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	r, _ := ss.Read(ctx)
	if r.Values[1].HasRate {
		t.Fatalf("rate of a statistic added since the previous read: %+v", r.Values[1])
	}
	r, _ = ss.Read(ctx)
	if !r.Values[1].HasRate || r.Values[1].Rate != 50 {
		t.Fatalf("second read after Add: %+v", r.Values[1])
	}
}

type providerFunc func(b *Builder) error

func (f providerFunc) Name() string             { return "func" }
func (f providerFunc) Collect(b *Builder) error { return f(b) }
