package rtimearm

import (
	"math"
	"testing"
	"time"

	"github.com/perfagent/subagent/armring"
)

func TestPTXMetricsAndWeight(t *testing.T) {
	tr := &tran{}
	now := time.Now()
	for _, ms := range []uint64{100, 200} {
		tr.observe(&armring.Record{Dur: ms * uint64(time.Millisecond)}, now, 0.75, time.Minute)
	}
	tr.observe(&armring.Record{Status: armring.Abort, Dur: 1}, now, 0.75, time.Minute)
	tr.observe(&armring.Record{Status: armring.Failed, Dur: 1}, now, 0.75, time.Minute)
	// respavg = 75% of the previous average + 25% of the new observation.
	if tr.respavg != 125 || tr.resptime != 200 || tr.respmin != 100 || tr.respmax != 200 || tr.count != 2 || tr.aborted != 1 || tr.failed != 1 {
		t.Fatalf("%+v", tr)
	}
	tr.observe(&armring.Record{Dur: 300 * uint64(time.Millisecond)}, now, 0.5, time.Minute)
	if tr.respavg != 212.5 {
		t.Fatalf("respavg with weight 50%%: %v, want 212.5", tr.respavg)
	}
}

func TestWindowQuantilesAndRate(t *testing.T) {
	w := newWindow(time.Minute)
	now := time.Unix(1000, 0)
	for i := 1; i <= 1000; i++ {
		w.add(now, true, time.Duration(i)*time.Millisecond)
	}
	w.add(now, false, 0)
	var q [3]float64
	if !w.quantiles(now, quantiles, q[:]) {
		t.Fatal("no quantiles")
	}
	for i, want := range []float64{500, 900, 990} {
		if math.Abs(q[i]-want)/want > 0.07 {
			t.Errorf("q%v = %v, want %v within 7%%", quantiles[i], q[i], want)
		}
	}
	if r := w.rate(now); math.Abs(r-1001.0/60) > 1e-9 {
		t.Errorf("rate %v", r)
	}
	// A minute later the window has moved past every bucket.
	later := now.Add(time.Minute + time.Second)
	if w.quantiles(later, quantiles, q[:]) || w.rate(later) != 0 {
		t.Error("old buckets still counted")
	}
	for us := uint64(0); us < 1<<40; us = us*2 + 1 {
		if b := binOf(us); b < 0 || b >= numBins || (us < 1<<maxExp && math.Abs(binMid(b)-float64(us)) > float64(us)/8+1) {
			t.Fatalf("binOf(%d) = %d (mid %v)", us, b, binMid(b))
		}
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
		tr.observe(&r, now, 0.75, time.Minute)
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
