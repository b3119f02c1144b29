package rtimearm

import (
	"math"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/armring"
	"github.com/perfagent/subagent/spmi"
)

// served builds the transaction's application-defined metrics as a reader
// at now would see them.
func served(t *testing.T, tr *tran, now time.Time) *spmi.Snapshot {
	t.Helper()
	b := spmi.NewBuilder(asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1}, nil, now)
	cx, err := b.Context(nil, &spmi.CxDesc{Name: "T", Descr: "test", ASN: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.addMetrics(b, cx, now); err != nil {
		t.Fatal(err)
	}
	return b.Finish()
}

func metricTran() *tran {
	return &tran{types: [armring.NumFields]uint32{armring.Counter32, armring.Gauge32, armring.CntrDivr32, armring.GaugeDivr32}}
}

// post completes one instance charging counter c, gauge g, c/4 and g/2.
func post(tr *tran, now time.Time, c uint32, g int32) {
	r := armring.Record{Mask: 0x0f, Values: [6]uint64{uint64(c), uint64(uint32(g)), uint64(c) | 4<<32, uint64(uint32(g)) | 2<<32}}
	tr.observeRecord(&r, now, time.Minute)
}

// gauge returns field i's last, avg, min, max; ok false for those without a value.
func gauge(t *testing.T, s *spmi.Snapshot, i string) (v [4]float64, ok [4]bool) {
	t.Helper()
	for k, sfx := range []string{"", "avg", "min", "max"} {
		x := stat(t, s, "T/metric"+i+sfx)
		v[k], ok[k] = x.Float64(), x.OK()
	}
	return v, ok
}

func TestMetricWindowAggregatesAndExpires(t *testing.T) {
	tr := metricTran()
	t0 := time.Unix(6000, 0) // a 10 s bucket starts here
	post(tr, t0, 5, 10)
	post(tr, t0.Add(time.Second), 7, -4)
	post(tr, t0.Add(30*time.Second), 100, 50)

	type want struct {
		total, sum             float64
		last, avg, lo, hi      float64
		empty                  bool
		divTotal, divSum, divL float64
	}
	check := func(at time.Duration, w want) {
		t.Helper()
		s := served(t, tr, t0.Add(at))
		if got := stat(t, s, "T/metric1").Uint64(); float64(got) != w.total {
			t.Errorf("%v: metric1 total %d, want %v", at, got, w.total)
		}
		if got := stat(t, s, "T/metric1sum"); !got.OK() || got.Float64() != w.sum {
			t.Errorf("%v: metric1sum %v, want %v", at, got, w.sum)
		}
		if got := stat(t, s, "T/metric3").Float64(); got != w.divTotal {
			t.Errorf("%v: metric3 total %v, want %v", at, got, w.divTotal)
		}
		if got := stat(t, s, "T/metric3sum").Float64(); got != w.divSum {
			t.Errorf("%v: metric3sum %v, want %v", at, got, w.divSum)
		}
		v, ok := gauge(t, s, "2")
		if !ok[0] || v[0] != w.last {
			t.Errorf("%v: metric2 last %v (%v), want %v", at, v[0], ok[0], w.last)
		}
		if w.empty {
			if ok[1] || ok[2] || ok[3] {
				t.Errorf("%v: empty window still serves avg/min/max %v", at, v)
			}
		} else if !ok[1] || !ok[2] || !ok[3] || math.Abs(v[1]-w.avg) > 1e-9 || v[2] != w.lo || v[3] != w.hi {
			t.Errorf("%v: metric2 avg/min/max %v, want %v %v %v", at, v[1:], w.avg, w.lo, w.hi)
		} else if !(v[2] <= v[1] && v[1] <= v[3]) {
			t.Errorf("%v: min %v avg %v max %v out of order", at, v[2], v[1], v[3])
		}
		if d, ok := gauge(t, s, "4"); !ok[0] || d[0] != w.divL || (!w.empty && !(d[2] <= d[1] && d[1] <= d[3])) {
			t.Errorf("%v: metric4 %v %v", at, d, ok)
		}
	}
	// All three inside the window.
	check(30*time.Second, want{total: 112, sum: 112, last: 50, avg: 56.0 / 3, lo: -4, hi: 50,
		divTotal: 28, divSum: 28, divL: 25})
	// 65 s on, the first bucket (and its slot, now reused) has dropped out.
	check(65*time.Second, want{total: 112, sum: 100, last: 50, avg: 50, lo: 50, hi: 50,
		divTotal: 28, divSum: 25, divL: 25})
	// Past the last value: the window is empty, the total and last stay.
	check(100*time.Second, want{total: 112, sum: 0, last: 50, empty: true, divTotal: 28, divSum: 0, divL: 25})
	// The total keeps growing while the window starts again, in the slot
	// t0 used: its old values must not come back.
	post(tr, t0.Add(120*time.Second), 1, 3)
	check(120*time.Second, want{total: 113, sum: 1, last: 3, avg: 3, lo: 3, hi: 3,
		divTotal: 28.25, divSum: 0.25, divL: 1.5})
}

func TestMetricNumbersAndKinds(t *testing.T) {
	tr := metricTran()
	tr.types[4] = armring.Gauge64
	post(tr, time.Unix(6000, 0), 1, 1)
	s := served(t, tr, time.Unix(6000, 0))
	for name, w := range map[string]struct {
		asn  uint32
		kind asn1tree.Kind
	}{
		"metric1": {21, asn1tree.Counter64}, "metric1sum": {22, asn1tree.Counter64},
		"metric2": {25, asn1tree.Integer32}, "metric2avg": {26, asn1tree.Integer32},
		"metric2min": {27, asn1tree.Integer32}, "metric2max": {28, asn1tree.Integer32},
		"metric3": {29, asn1tree.Counter64}, "metric3sum": {30, asn1tree.Counter64},
		"metric5": {37, asn1tree.Counter64}, "metric5max": {40, asn1tree.Counter64},
	} {
		n, err := s.Lookup("T/" + name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if n.ASN != w.asn || spmi.SNMPKind(n.Stat) != w.kind {
			t.Errorf("%s: ASN %d kind %v, want %d %v", name, n.ASN, spmi.SNMPKind(n.Stat), w.asn, w.kind)
		}
	}
	// metric3sum keeps 3 decimals on the wire: 1/4 is 250.
	n, _ := s.Lookup("T/metric3sum")
	if v := spmi.SNMPValue(n.Stat, n.Value); v.Num != 250 {
		t.Errorf("metric3sum on the wire %+v, want 250", v)
	}
}

func TestMetricWindowOnlyWhenDeclared(t *testing.T) {
	tr := &tran{types: [armring.NumFields]uint32{armring.NumericID32, armring.String8}}
	tr.observeRecord(&armring.Record{Mask: 3, Values: [6]uint64{9, 0x6b6f}}, time.Unix(6000, 0), time.Minute)
	if tr.win.fields != nil {
		t.Error("per-field buckets allocated for a transaction without counters or gauges")
	}
	tr = metricTran()
	post(tr, time.Unix(6000, 0), 1, 1)
	if tr.win.fields == nil {
		t.Error("no per-field buckets for counters and gauges")
	}
}
