package rtimearm_test

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/arm"
	"github.com/perfagent/subagent/client/armring"
	"github.com/perfagent/subagent/rtimearm"
	"github.com/perfagent/subagent/rtimearm/armtest"
	"github.com/perfagent/subagent/slo"
	"github.com/perfagent/subagent/spmi"
)

// done is one completion as the test made it: when the daemon took it
// (the registry's clock at the drain), and whether each objective counts
// it good.
type done struct {
	at      time.Time
	latency bool // good for the latency objective
	avail   bool // good for availability
}

var sloObjectives = []slo.Objective{
	{Name: "checkout", Application: "Shop*", Transaction: "Checkout", Threshold: 300 * time.Millisecond, Target: 0.99, Window: 24 * time.Hour},
	{Name: "checkout30d", Application: "Shop*", Transaction: "Check*", Threshold: 300 * time.Millisecond, Target: 0.999, Window: 30 * 24 * time.Hour},
	{Name: "available", Application: "ShopFront", Transaction: "*", Target: 0.995, Window: time.Hour},
	{Name: "other", Application: "Other", Transaction: "*", Target: 0.9, Window: time.Hour},
}

// want is an objective's status computed from the test's own record,
// with the buckets' rule: a completion counts in a span of n buckets
// ending at now when its bucket is one of the last n.
func want(o slo.Objective, rec []done, now time.Time) slo.Status {
	st := slo.Status{Objective: o, Budget: 1}
	if o.Application == "Other" {
		st.Burn = make([]float64, len(slo.Periods))
		return st
	}
	good := func(d done) bool {
		if o.Threshold > 0 {
			return d.latency
		}
		return d.avail
	}
	count := func(bucket time.Duration, span time.Duration) (total, bad uint64) {
		last := now.Unix() / int64(bucket/time.Second)
		n := int64(span / bucket)
		for _, d := range rec {
			if b := d.at.Unix() / int64(bucket/time.Second); b > last-n && b <= last {
				total++
				if !good(d) {
					bad++
				}
			}
		}
		return total, bad
	}
	bucket := slo.Fine
	if o.Window > slo.FineSpan {
		bucket = slo.Coarse
	}
	total, bad := count(bucket, o.Window)
	st.Total, st.Good = total, total-bad
	if total > 0 {
		st.SLI, st.HasSLI = float64(total-bad)/float64(total), true
		st.Budget = 1 - float64(bad)/float64(total)/(1-o.Target)
	}
	for _, p := range slo.Periods {
		t, b := count(slo.Fine, p)
		r := 0.0
		if t > 0 {
			r = float64(b) / float64(t) / (1 - o.Target)
		}
		st.Burn = append(st.Burn, r)
	}
	return st
}

// checkServed compares the set's statuses and the served SLO/<name>
// statistics with those computed from the record.
func checkServed(t *testing.T, when string, set *slo.Set, rec []done, now time.Time) {
	t.Helper()
	got := set.Statuses(now)
	b := spmi.NewBuilder(asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1}, nil, now)
	if err := (slo.Provider{S: set}).Collect(b); err != nil {
		t.Fatal(err)
	}
	snap := b.Finish()
	for i, o := range sloObjectives {
		w, g := want(o, rec, now), got[i]
		if g.Total != w.Total || g.Good != w.Good || g.SLI != w.SLI || g.HasSLI != w.HasSLI || g.Budget != w.Budget {
			t.Errorf("%s, %s: good/total %d/%d SLI %v budget %v, want %d/%d %v %v", when, o.Name, g.Good, g.Total, g.SLI, g.Budget, w.Good, w.Total, w.SLI, w.Budget)
		}
		for k := range slo.Periods {
			if g.Burn[k] != w.Burn[k] {
				t.Errorf("%s, %s: burn over %v %v, want %v", when, o.Name, slo.Periods[k], g.Burn[k], w.Burn[k])
			}
		}
		served := func(stat string, want float64, scale float64) {
			v := armtest.Stat(t, snap, "SLO/"+o.Name+"/"+stat)
			if math.Abs(v.Float64()-want) > 0.5/scale {
				t.Errorf("%s: SLO/%s/%s served %v, want %v", when, o.Name, stat, v.Float64(), want)
			}
		}
		if w.HasSLI {
			served("sli", 100*w.SLI, 1e4)
		}
		served("budget", 100*w.Budget, 1e3)
		for k, name := range []string{"burn5m", "burn30m", "burn1h", "burn6h", "burn1d", "burn3d"} {
			served(name, w.Burn[k], 1e3)
		}
		if v := armtest.Stat(t, snap, "SLO/"+o.Name+"/good").Uint64(); v != w.Good {
			t.Errorf("%s: SLO/%s/good %d, want %d", when, o.Name, v, w.Good)
		}
		if v := armtest.Stat(t, snap, "SLO/"+o.Name+"/total").Uint64(); v != w.Total {
			t.Errorf("%s: SLO/%s/total %d, want %d", when, o.Name, v, w.Total)
		}
	}
}

// 10,000 checkouts through the Go library, reported with synthetic
// response times over five simulated hours: about 3 % slower than the
// 300 ms threshold (some exactly at it, which is good, and 1 ns beyond,
// which is not), 1 % failed. What SLO/<name> serves equals what the test
// computes from its own record, before and after a daemon restart.
func TestObjectivesExactThroughTheLibrary(t *testing.T) {
	clk := &rtimearm.Clock{}
	t0 := time.Date(2026, 11, 2, 9, 0, 30, 0, time.UTC)
	clk.Set(t0)
	set := slo.NewSet(sloObjectives)
	reg, tr := armtest.Checkout(t, set, clk.Now)

	rng := rand.New(rand.NewPCG(42, 42))
	const th = 300 * time.Millisecond
	var rec []done
	run := func(steps, each int, tr *arm.Tran, reg *rtimearm.Registry) {
		for range steps {
			clk.Advance(90 * time.Second)
			for range each {
				d, s := time.Duration(rng.Int64N(int64(th))), arm.Good
				switch x := rng.IntN(1000); {
				case x < 10:
					s = arm.Failed
				case x < 12:
					d = th // exactly the threshold: good
				case x < 14:
					d = th + 1 // a nanosecond beyond: slow
				case x < 40:
					d = th + time.Duration(rng.Int64N(int64(time.Second)))
				}
				tr.Report(s, d)
				rec = append(rec, done{latency: s == arm.Good && d <= th, avail: s == arm.Good})
			}
			reg.DrainAll()
			for i := len(rec) - each; i < len(rec); i++ {
				rec[i].at = clk.Now()
			}
		}
	}
	run(200, 50, tr, reg)
	slow := 0
	for _, d := range rec {
		if !d.latency {
			slow++
		}
	}
	t.Logf("%d transactions, %d not good for the latency objective", len(rec), slow)
	if len(rec) != 10000 || slow < 200 || slow > 500 {
		t.Fatalf("the workload is not what the test means: %d transactions, %d not good", len(rec), slow)
	}
	checkServed(t, "after 5 hours", set, rec, clk.Now())
	clk.Advance(40 * time.Minute) // the 5 and 30 minute spans are empty, the hour's window half
	checkServed(t, "40 minutes later", set, rec, clk.Now())

	// A restart: the counts saved, a new set and daemon load them.
	path := filepath.Join(t.TempDir(), slo.StateFile)
	if err := set.Save(path); err != nil {
		t.Fatal(err)
	}
	set2 := slo.NewSet(sloObjectives)
	if n, err := set2.Load(path); err != nil || n != len(sloObjectives) {
		t.Fatalf("Load: %d restored, %v; want %d", n, err, len(sloObjectives))
	}
	checkServed(t, "after the restart", set2, rec, clk.Now())
	reg2, tr2 := armtest.Checkout(t, set2, clk.Now)
	run(20, 50, tr2, reg2)
	checkServed(t, "after the restart and 1,000 more", set2, rec, clk.Now())
}

// A short-lived process may complete its instances before the daemon
// first sees its transaction and gives the library the thresholds (the
// SDK's correlated pair does): those are classified by their bins.
func TestInstancesBeforeTheThresholdsAreClassifiedByBin(t *testing.T) {
	set := slo.NewSet([]slo.Objective{{Name: "serve", Application: "Corr*", Transaction: "Serve", Threshold: 500 * time.Microsecond, Target: 0.99, Window: time.Hour}})
	reg := rtimearm.NewRegistry(rtimearm.Limits{MaxApps: 8, MaxTrans: 16}, 75, time.Minute, nil, nil)
	reg.SetObjectives(set, nil)
	fx := armtest.Start(t, armtest.Options{Geometry: armring.Geometry{Slots: 64, Apps: 4, Trans: 4}, Registry: reg})
	tr := fx.Agent().App("Corr Server", "").Transaction("Serve", "")
	for range 10 {
		tr.Report(arm.Good, time.Millisecond)       // beyond the threshold's bin: slow
		tr.Report(arm.Good, 100*time.Microsecond)   // good
		tr.Report(arm.Good, 500*time.Microsecond)   // in the threshold's bin, the take's minimum below: good
		tr.Report(arm.Failed, 100*time.Microsecond) // bad
	}
	reg.DrainAll()
	tr.Report(arm.Good, 501*time.Microsecond) // after: classified by the library, exactly
	reg.DrainAll()
	st := set.Statuses(time.Now())[0]
	if st.Total != 41 || st.Good != 20 {
		t.Fatalf("good %d of %d, want 20 of 41", st.Good, st.Total)
	}
}
