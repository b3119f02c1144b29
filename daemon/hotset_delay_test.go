package daemon

import (
	"testing"
	"time"
)

// Each evaluation lands in the bucket of its delay, bounds included, and
// the served values follow the descriptions one for one.
func TestDelayHistBuckets(t *testing.T) {
	var h delayHist
	for _, d := range []time.Duration{0, time.Millisecond, time.Millisecond + 1, 50 * time.Millisecond, 51 * time.Millisecond, 2 * time.Second} {
		h.add(d)
	}
	want := []uint64{2, 1, 0, 0, 1, 1, 0, 0, 1}
	for i, w := range want {
		if got := h.n[i].Load(); got != w {
			t.Errorf("bucket %d (%s): %d evaluations, want %d", i, delayStats()[2+i].Name, got, w)
		}
	}
	if h.max.Load() != int64(2*time.Second) || h.last.Load() != int64(2*time.Second) {
		t.Errorf("last %v, max %v; want 2s both", time.Duration(h.last.Load()), time.Duration(h.max.Load()))
	}
	sd, v := delayStats(), h.values()
	if len(sd) != len(v) || sd[len(sd)-1].Name != "delaygt1000" || sd[6].Name != "delayle50" {
		t.Errorf("%d descriptions, %d values; names %s, %s", len(sd), len(v), sd[6].Name, sd[len(sd)-1].Name)
	}
	for i, s := range HotsetsStats {
		if len(s.Descr) > 63 || len(s.Name) > 31 {
			t.Errorf("Agent/hotsets/%s: name or description too long for a StatDesc: %q", s.Name, s.Descr)
		}
		if s.ASN != uint32(i+1) {
			t.Errorf("Agent/hotsets/%s has ASN %d, want %d", s.Name, s.ASN, i+1)
		}
	}
}
