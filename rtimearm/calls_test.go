package rtimearm_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/arm"
	"github.com/perfagent/subagent/client/armring"
	"github.com/perfagent/subagent/rtimearm"
	"github.com/perfagent/subagent/rtimearm/armtest"
)

// work spends at least d.
func work(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

// A three-level Go program: 5 pages, each making 2 queries, each making
// 3 reads, one of which fails. RTime/Calls lists exactly its two edges,
// with counts equal to the child instances started, the failures, and a
// child time within its parent's.
func TestCallGraphOfAThreeLevelProgram(t *testing.T) {
	fx := armtest.Start(t, armtest.Options{Geometry: armring.Geometry{Slots: 256, Apps: 4, Trans: 8},
		Limits: rtimearm.Limits{MaxApps: 8, MaxTrans: 16}})
	a := fx.Agent()
	page := a.App("Front", "").Transaction("Page", "")
	query := a.App("Mid", "").Transaction("Query", "")
	read := a.App("Back", "").Transaction("Read", "")
	for range 5 {
		p := page.Start()
		for range 2 {
			q := query.StartChild(p.Correlator())
			for k := range 3 {
				r := read.StartChild(q.Correlator())
				work(200 * time.Microsecond)
				st := arm.Good
				if k == 2 {
					st = arm.Failed
				}
				r.Stop(st)
			}
			q.Stop(arm.Good)
		}
		p.Stop(arm.Good)
	}
	es := armtest.Edges(t, fx.Snapshot())
	if len(es) != 2 {
		t.Fatalf("%d edges, want 2: %+v", len(es), es)
	}
	pq, qr := es[0], es[1]
	if pq.Parent != "Front/Page" || pq.Child != "Mid/Query" || pq.Count != 10 || pq.Failures != 0 {
		t.Errorf("first edge %+v, want Front/Page > Mid/Query, 10 instances, no failure", pq)
	}
	if qr.Parent != "Mid/Query" || qr.Child != "Back/Read" || qr.Count != 30 || qr.Failures != 10 {
		t.Errorf("second edge %+v, want Mid/Query > Back/Read, 30 instances, 10 failures", qr)
	}
	for _, e := range es {
		if e.ShareUnmeasured || e.Share <= 0 || e.Share > 100 || e.Total <= 0 || e.Mean*float64(e.Count) < e.Total*0.999 || e.Mean*float64(e.Count) > e.Total*1.001 {
			t.Errorf("edge %s > %s: total %v ms, mean %v ms, share %v %%: want a child time within its parent's", e.Parent, e.Child, e.Total, e.Mean, e.Share)
		}
	}
	// The reads of a query run within it: their time is within the
	// queries' time, which is the first edge's total.
	if qr.Total > pq.Total {
		t.Errorf("reads took %v ms, more than the queries that made them (%v ms)", qr.Total, pq.Total)
	}
	if n := fx.Stat("RTime/Calls/edges").Uint64(); n != 2 {
		t.Errorf("RTime/Calls/edges %d, want 2", n)
	}
}

// Edges into one application are bounded: the instances of those beyond
// rtimearm.MaxEdgesPerApp are counted in RTime/Calls/overflow.
func TestCallGraphEdgesPerApplicationAreBounded(t *testing.T) {
	n := rtimearm.MaxEdgesPerApp + 3
	fx := armtest.Start(t, armtest.Options{Geometry: armring.Geometry{Slots: 256, Apps: 4, Trans: 128},
		Limits: rtimearm.Limits{MaxApps: 8, MaxTrans: 256}})
	a := fx.Agent()
	p := a.App("Caller", "").Transaction("Call", "").Start()
	callee := a.App("Callee", "")
	for i := range n {
		for range 2 {
			h := callee.Transaction("T"+strconv.Itoa(i), "").StartChild(p.Correlator())
			h.Stop(arm.Good)
		}
	}
	p.Stop(arm.Good)
	s := fx.Snapshot()
	if es := armtest.Edges(t, s); len(es) != rtimearm.MaxEdgesPerApp {
		t.Errorf("%d edges, want %d", len(es), rtimearm.MaxEdgesPerApp)
	}
	if got := armtest.Stat(t, s, "RTime/Calls/overflow").Uint64(); got != 6 {
		t.Errorf("overflow %d, want the 6 instances of the 3 edges beyond the limit", got)
	}
}
