package hotset

import (
	"fmt"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/perfagent/subagent/spmi"
)

// heapAfterGC is the live heap once collected.
func heapAfterGC() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// Bound is what a budget relies on: never below what the engine holds,
// and not so far above that a budget refuses what would fit.
func TestBoundCoversWhatTheEngineHolds(t *testing.T) {
	f, c := newFake(), newClock()
	for i := range 5000 {
		f.busy[fmt.Sprintf("d%05d", i)] = uint64(i)
		f.qlen[fmt.Sprintf("d%05d", i)] = int64(i % 60)
	}
	for _, tc := range []struct {
		name string
		defs []Def
		// the bound may exceed the heap held by at most this factor
		slack float64
	}{
		{"every peer fed", []Def{
			{Name: "busy", GrandParent: "Disk", Stat: "busy", Feed: FeedAlways},
			{Name: "qlen", GrandParent: "Disk", Stat: "qlen", Feed: FeedAlways},
		}, 2},
		{"top 5 with exceptions", []Def{
			{Name: "busy", GrandParent: "Disk", Stat: "busy", MaxResp: 5, Threshold: 1, Frequency: 5 * time.Minute,
				Feed: FeedThreshold, Excp: ExcpException, Severity: 1},
		}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := heapAfterGC()
			e, err := New(tc.defs, 5, c.now)
			if err != nil {
				t.Fatal(err)
			}
			// Two snapshots: counters have rates from the second on.
			e.Evaluate(snapAt(f, c.t))
			c.add(time.Second)
			for k := range f.busy {
				f.busy[k] += 7
			}
			e.Evaluate(snapAt(f, c.t))
			held := heapAfterGC() - before
			bound := e.Bound()
			runtime.KeepAlive(e)
			t.Logf("bound %d bytes, held %d", bound, held)
			if bound < held || float64(bound) > tc.slack*float64(held) {
				t.Errorf("Bound() = %d bytes; the engine holds %d (want from 1x to %.0fx)", bound, held, tc.slack)
			}
		})
	}
}

// Before evaluating, a hotset counts its definition only; a peer set
// with nothing to feed, or capped at maxresp, is bounded by what it keeps.
func TestBoundFollowsTheDefinition(t *testing.T) {
	f, c := newFake(), newClock()
	for i := range 1000 {
		f.qlen[fmt.Sprintf("d%04d", i)] = 1
		f.busy[fmt.Sprintf("d%04d", i)] = 1
	}
	all := mustEngine(t, c, Def{Name: "a", GrandParent: "Disk", Stat: "qlen", Feed: FeedAlways})
	top := mustEngine(t, c, Def{Name: "a", GrandParent: "Disk", Stat: "qlen", MaxResp: 5, Feed: FeedAlways})
	unborn := all.Bound()
	s := snapAt(f, c.t)
	all.Evaluate(s)
	top.Evaluate(s)
	if unborn > 1024 || all.Bound() < 1000*itemBytes || top.Bound() > 10*itemBytes+unborn {
		t.Errorf("bounds: %d before evaluating, %d for 1000 peers fed, %d for the top 5", unborn, all.Bound(), top.Bound())
	}
}

// Results hold their own values, names and OIDs: once nobody else holds
// a snapshot, it is collected, whatever the engine keeps.
func TestResultsHoldNoSnapshot(t *testing.T) {
	f, c := newFake(), newClock()
	disks(f, map[string]uint64{"a": 1, "b": 2}, map[string]int64{"a": 3, "b": 4})
	e := mustEngine(t, c,
		Def{Name: "busy", GrandParent: "Disk", Stat: "busy", MaxResp: 1, Threshold: 1, Frequency: 5 * time.Minute,
			Feed: FeedAlways, Excp: ExcpException, Severity: 1},
		Def{Name: "qlen", GrandParent: "Disk", Stat: "qlen", Feed: FeedThreshold})
	var snap weak.Pointer[spmi.Snapshot]
	var peer weak.Pointer[spmi.Node]
	for i := range 2 {
		s := snapAt(f, c.t)
		e.Evaluate(s)
		snap = weak.Make(s)
		n, err := s.Lookup("Disk/a/busy")
		if err != nil {
			t.Fatal(err)
		}
		peer = weak.Make(n)
		c.add(time.Second)
		disks(f, map[string]uint64{"a": uint64(100 * (i + 1))}, nil)
	}
	runtime.GC()
	runtime.GC()
	v := e.Views()
	if len(v[0].Result.Groups) != 1 || len(v[0].Exceptions) != 1 || len(v[1].Result.Groups[0].Items) != 2 {
		t.Fatalf("results: %+v", v)
	}
	if snap.Value() != nil || peer.Value() != nil {
		t.Errorf("after the engine's evaluations, snapshot alive %v, one of its peers alive %v", snap.Value() != nil, peer.Value() != nil)
	}
}

// A snapshot evaluated already keeps its results: within one snapshot a
// counter has no rate, so evaluating it again would lose every one.
func TestEvaluatingTheSameSnapshotAgainKeepsTheResults(t *testing.T) {
	f, c := newFake(), newClock()
	disks(f, map[string]uint64{"a": 0}, nil)
	e := mustEngine(t, c, Def{Name: "busy", GrandParent: "Disk", Stat: "busy", Feed: FeedAlways})
	e.Evaluate(snapAt(f, c.t))
	c.add(time.Second)
	disks(f, map[string]uint64{"a": 10}, nil)
	s := snapAt(f, c.t)
	e.Evaluate(s)
	e.Evaluate(s)
	if err := e.Replace(append(e.Defs(), Def{Name: "busy2", GrandParent: "Disk", Stat: "busy", Feed: FeedAlways})); err != nil {
		t.Fatal(err)
	}
	e.Evaluate(s)
	v := e.Views()
	if g := v[0].Result.Groups; len(g) != 1 || len(g[0].Items) != 1 || g[0].Items[0].Value != 10 {
		t.Errorf("read twice: %+v, want busy at 10 per second", g)
	}
	if v[1].Result.Time != s.Time {
		t.Errorf("hotset added since was not evaluated: %+v", v[1].Result)
	}
	if n := e.Evaluations(); n != 4 {
		t.Errorf("%d evaluations counted, want 4", n)
	}
}

// Forget leaves the definitions and starts over: no results, no counter
// values, exception numbers never reused.
func TestForget(t *testing.T) {
	f, c := newFake(), newClock()
	disks(f, map[string]uint64{"a": 0}, nil)
	e := mustEngine(t, c, Def{Name: "busy", GrandParent: "Disk", Stat: "busy", MaxResp: 1, Threshold: 1,
		Frequency: 5 * time.Minute, Feed: FeedAlways, Excp: ExcpException, Severity: 1})
	step := func(by uint64) {
		c.add(10 * time.Minute)
		f.busy["a"] += by
		e.Evaluate(snapAt(f, c.t))
	}
	step(0)
	step(6000) // 10 per second
	e.Forget()
	if v := e.Views(); len(v) != 1 || v[0].Result.Groups != nil || v[0].Exceptions != nil || v[0].Events != 1 {
		t.Fatalf("after Forget: %+v", v)
	}
	step(6000) // the first reading again: no rate
	if v := e.Views(); len(v[0].Result.Groups[0].Items) != 1 || !v[0].Result.Groups[0].Items[0].NoRate {
		t.Errorf("a counter had a rate right after Forget: %+v", v[0].Result)
	}
	step(6000)
	if v := e.Views(); len(v[0].Exceptions) != 1 || v[0].Exceptions[0].Seq != 2 {
		t.Errorf("exception after Forget: %+v, want number 2", v[0].Exceptions)
	}
}
