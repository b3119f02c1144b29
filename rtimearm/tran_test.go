package rtimearm

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/armring"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

// collect and stat read a registry of the internal tests; the external
// ones, with a server, use armtest's (which imports this package).
func collect(t *testing.T, reg *Registry) *spmi.Snapshot {
	t.Helper()
	b := spmi.NewBuilder(asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1}, nil, time.Now())
	if err := reg.Provider().Collect(b); err != nil {
		t.Fatal(err)
	}
	return b.Finish()
}

func stat(t *testing.T, s *spmi.Snapshot, path string) spmiwire.Value {
	t.Helper()
	n, err := s.Lookup(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return n.Value
}

// totals is what a take would return for these completions.
func totals(aborted, failed uint64, good ...time.Duration) *armring.Totals {
	t := &armring.Totals{Aborted: aborted, Failed: failed}
	var sum uint64
	for i, d := range good {
		ns := uint64(d)
		if i == 0 {
			t.Min, t.Max = ns, ns
		}
		t.Min, t.Max = min(t.Min, ns), max(t.Max, ns)
		t.Bins[armring.Bin(ns)]++
		t.Good++
		sum += ns
		t.Last = ns
	}
	if t.Good > 0 {
		t.Mean = sum / t.Good
	}
	return t
}

func TestPTXMetricsAndWeight(t *testing.T) {
	tr := &tran{}
	now := time.Now()
	for _, ms := range []time.Duration{100, 200} {
		tr.observe(totals(0, 0, ms*time.Millisecond), now, now, 0.75, time.Minute)
	}
	tr.observe(totals(1, 1), now, now, 0.75, time.Minute)
	// respavg = 75% of the previous average + 25% of the new observation.
	if tr.respavg != 125 || tr.resptime != 200 || tr.respmin != 100 || tr.respmax != 200 || tr.count != 2 || tr.aborted != 1 || tr.failed != 1 {
		t.Fatalf("%+v", tr)
	}
	tr.observe(totals(0, 0, 300*time.Millisecond), now, now, 0.5, time.Minute)
	if tr.respavg != 212.5 {
		t.Fatalf("respavg with weight 50%%: %v, want 212.5", tr.respavg)
	}
	// Two instances taken together weigh as two in a row of their mean.
	tr.observe(totals(0, 0, 100*time.Millisecond, 300*time.Millisecond), now, now, 0.5, time.Minute)
	if want := 0.25*212.5 + 0.75*200; math.Abs(tr.respavg-want) > 1e-9 || tr.count != 5 || tr.resptime != 300 {
		t.Fatalf("respavg %v count %d resptime %d, want %v, 5, 300", tr.respavg, tr.count, tr.resptime, want)
	}
}

func TestBinsCoverEveryTime(t *testing.T) {
	prev := uint64(0)
	for i := range armring.NumBins {
		lo, hi := armring.BinBounds(i)
		if lo != prev || hi <= lo || armring.Bin(lo) != i || armring.Bin(hi-1) != i {
			t.Fatalf("bin %d = [%d, %d) after %d; Bin(lo) %d Bin(hi-1) %d", i, lo, hi, prev, armring.Bin(lo), armring.Bin(hi-1))
		}
		if i >= 16 && i < armring.NumBins-1 && hi-lo > lo/8 {
			t.Fatalf("bin %d = [%d, %d) is wider than 1/8 of its start", i, lo, hi)
		}
		if i < 16 && hi-lo != 1000 {
			t.Fatalf("bin %d = [%d, %d) is not 1 µs", i, lo, hi)
		}
		prev = hi
	}
	if prev != armring.MaxDur+1 {
		t.Fatalf("the last bin ends at %d", prev)
	}
}

// Every transaction exactly 1,000 ms: each percentile is 1,000 ms, not
// the middle of its bin (1015.808 before).
func TestPercentilesOfAConstantLatencyAreIt(t *testing.T) {
	for _, d := range []time.Duration{time.Second, 1500 * time.Microsecond, 3 * time.Microsecond, 40 * time.Millisecond} {
		w := newWindow(time.Minute)
		now := time.Unix(6000, 0)
		var good []time.Duration
		for range 500 {
			good = append(good, d)
		}
		w.add(now, now, totals(0, 0, good...))
		var q [3]float64
		if !w.quantiles(now, quantiles, q[:]) {
			t.Fatal("no quantiles")
		}
		want := float64(d) / 1e6
		if q[0] != want || q[1] != want || q[2] != want {
			t.Errorf("%v: resp50/90/99 = %v, want %v", d, q, want)
		}
	}
}

// Percentiles are within half a bin of the true ones (1/16 of the value,
// 0.5 µs below 16 µs), in order, and within [min, max] of the window:
// with whole milliseconds, within [respmin, respmax].
func TestPercentilesBoundAndOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		w := newWindow(time.Minute)
		tr := &tran{win: w}
		now := time.Unix(6000, 0)
		var all []time.Duration
		scale := math.Pow(10, float64(rng.IntN(7))) // 1 µs to 1 s
		wholeMS := round%2 == 0
		for b := range 3 { // three drains, in two buckets
			var good []time.Duration
			for range 1 + rng.IntN(300) {
				d := time.Duration(rng.ExpFloat64() * scale * 1000)
				if wholeMS {
					d = d.Truncate(time.Millisecond) + time.Millisecond
				}
				good = append(good, d)
			}
			all = append(all, good...)
			at := now.Add(time.Duration(b) * 5 * time.Second)
			tr.observe(totals(0, 0, good...), at, now, 0.75, time.Minute)
		}
		at := now.Add(10 * time.Second)
		var q [3]float64
		if !w.quantiles(at, quantiles, q[:]) {
			t.Fatal("no quantiles")
		}
		slices.Sort(all)
		lo, hi := float64(all[0])/1e6, float64(all[len(all)-1])/1e6
		if !(lo <= q[0] && q[0] <= q[1] && q[1] <= q[2] && q[2] <= hi) {
			t.Fatalf("round %d: min %v resp50/90/99 %v max %v", round, lo, q, hi)
		}
		if wholeMS && !(float64(tr.respmin) <= q[0] && q[2] <= float64(tr.respmax)) {
			t.Fatalf("round %d: respmin %d resp50/90/99 %v respmax %d", round, tr.respmin, q, tr.respmax)
		}
		for k, p := range quantiles {
			truth := all[int(p*float64(len(all)-1))]
			blo, bhi := armring.BinBounds(armring.Bin(uint64(truth)))
			bound := float64(bhi-blo) / 2 / 1e6
			if math.Abs(q[k]-float64(truth)/1e6) > bound+1e-12 {
				t.Fatalf("round %d: q%v = %v, true %v, bound %v", round, p, q[k], float64(truth)/1e6, bound)
			}
			if truth >= 16*time.Microsecond && bound > float64(truth)/1e6/16 {
				t.Fatalf("bound %v over 1/16 of %v", bound, truth)
			}
		}
	}
}

func TestWindowExpires(t *testing.T) {
	w := newWindow(time.Minute)
	now := time.Unix(1000, 0)
	w.add(now, now.Add(-10*time.Second), totals(1, 0, time.Millisecond, 2*time.Millisecond))
	if r := w.rate(now); math.Abs(r-0.3) > 1e-9 {
		t.Errorf("rate %v, want 3 in 10 s", r)
	}
	later := now.Add(time.Minute + time.Second)
	var q [3]float64
	if w.quantiles(later, quantiles, q[:]) || w.rate(later) != 0 {
		t.Error("old buckets still counted")
	}
}

// A process doing 20 transactions a second reads 20/s from its first
// second on (it read 2.68/s for its first minute: the count divided by
// the whole window), on the registry's clock.
func TestRateDuringTheFirstWindow(t *testing.T) {
	g := armring.Geometry{Slots: 16, Apps: 1, Trans: 1}
	f, fd, unmap, err := createFile(g, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)
	defer unmap()
	reg := NewRegistry(Limits{MaxApps: 1, MaxTrans: 1}, 75, time.Minute, nil, nil)
	clock := time.Unix(6003, 0) // inside a bucket
	reg.now = func() time.Time { return clock }
	f.PublishApp(0, &armring.App{ID: 1, Key: "a"})
	f.PublishTran(0, &armring.Tran{ID: 2, Key: "t"})
	reg.procs[1] = &proc{id: 1, f: f, unmap: func() {}, drained: clock}
	rate := func() float64 {
		b := spmi.NewBuilder(asn1tree.OID{1, 3}, nil, clock)
		if err := reg.Provider().Collect(b); err != nil {
			t.Fatal(err)
		}
		n, err := b.Finish().Lookup("RTime/ARM/a/t/rate")
		if err != nil {
			t.Fatal(err)
		}
		return n.Value.Float64()
	}
	for step := 1; step <= 4*180; step++ { // 3 minutes, a drain each 250 ms
		for range 5 {
			f.Complete(0, armring.Good, uint64(time.Millisecond))
		}
		clock = clock.Add(250 * time.Millisecond)
		reg.DrainAll()
		if sec := float64(step) / 4; sec == 1 || sec == 3 || sec == 30 || sec == 59 || sec == 61 || sec == 179.75 {
			if r := rate(); math.Abs(r-20) > 1e-9 {
				t.Errorf("after %v s: rate %v, want 20", sec, r)
			}
		}
	}
	clock = clock.Add(30 * time.Second) // idle: half the window has none
	if r := rate(); r <= 8 || r >= 12 {
		t.Errorf("30 s after the last: rate %v, want about 10", r)
	}
}

// Transactions of exactly 1,000 ms through a process's file: the
// percentiles, respmin and respmax are all 1,000.
func TestTotalsThroughTheFile(t *testing.T) {
	g := armring.Geometry{Slots: 16, Apps: 1, Trans: 1}
	f, fd, unmap, err := createFile(g, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)
	defer unmap()
	reg := NewRegistry(Limits{MaxApps: 1, MaxTrans: 1}, 75, time.Minute, nil, nil)
	f.PublishApp(0, &armring.App{ID: 1, Key: "a"})
	f.PublishTran(0, &armring.Tran{ID: 2, Key: "t"})
	reg.procs[1] = &proc{id: 1, f: f, unmap: func() {}}
	for i := range 100 {
		f.Complete(0, armring.Good, uint64(time.Second))
		if i%30 == 0 {
			reg.DrainAll()
		}
	}
	f.Complete(0, armring.Failed, 5)
	s := collect(t, reg)
	for _, n := range []string{"resp50", "resp90", "resp99", "respmin", "respmax", "respavg", "resptime"} {
		if v := stat(t, s, "RTime/ARM/a/t/"+n).Float64(); v != 1000 {
			t.Errorf("%s = %v, want 1000", n, v)
		}
	}
	if c, fl := stat(t, s, "RTime/ARM/a/t/count").Uint64(), stat(t, s, "RTime/ARM/a/t/failed").Uint64(); c != 100 || fl != 1 {
		t.Errorf("count %d failed %d, want 100 and 1", c, fl)
	}
}

func TestApplicationMetricsByType(t *testing.T) {
	tr := &tran{types: [7]uint32{armring.Counter32, armring.CntrDivr32, armring.Gauge32, armring.GaugeDivr32, armring.NumericID64, armring.String8, armring.String32}}
	now := time.Now()
	neg := int32(-4)
	for _, r := range []armring.Record{
		{Mask: 0x7f, Values: [6]uint64{5, 10 | 4<<32, uint64(uint32(neg)), 9 | 2<<32, 77, 0x2020206b6f}},
		{Mask: 0x07, Values: [6]uint64{7, 2 | 4<<32, 10}},
	} {
		copy(r.Str[:], "part 9                          ")
		tr.observeRecord(&r, now, time.Minute)
	}
	m := tr.metrics
	if m[0].total != 12 || m[1].total != 3 {
		t.Errorf("counters: %v %v, want 12 and 10/4+2/4", m[0].total, m[1].total)
	}
	if g := tr.win.field(now, 2); m[2].last != 10 || g.min != -4 || g.max != 10 || g.sum/float64(g.n) != 3 {
		t.Errorf("gauge: last %v, window %+v", m[2].last, g)
	}
	if m[3].last != 4.5 || m[4].lastID != 77 || m[5].text != "ok" || m[6].text != "part 9" {
		t.Errorf("gauge divr %v id %v string8 %q string %q", m[3].last, m[4].lastID, m[5].text, m[6].text)
	}
}
