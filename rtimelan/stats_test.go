package rtimelan

import (
	"math"
	"testing"
	"time"
)

func ms(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }

func TestWeightedAverage(t *testing.T) {
	var s Stats
	s.Observe(ms(8), 75)
	if s.Avg != 8 {
		t.Fatalf("first observation: avg %v, want 8", s.Avg)
	}
	s.Observe(ms(16), 75) // 0.75*8 + 0.25*16 = 10
	s.Observe(ms(2), 75)  // 0.75*10 + 0.25*2 = 8
	if math.Abs(s.Avg-8) > 1e-9 {
		t.Errorf("avg %v, want 8", s.Avg)
	}
	var z Stats
	z.Observe(ms(5), 0)
	z.Observe(ms(40), 0) // weight 0: the newest observation alone
	if z.Avg != 40 {
		t.Errorf("weight 0: avg %v, want 40", z.Avg)
	}
	var n Stats
	n.Observe(ms(10), 90)
	n.Observe(ms(110), 90) // 0.9*10 + 0.1*110 = 20
	if math.Abs(n.Avg-20) > 1e-9 {
		t.Errorf("weight 90: avg %v, want 20", n.Avg)
	}
}

func TestBandsAndResptime(t *testing.T) {
	var s Stats
	if s.BandPercent(0) != 0 {
		t.Error("bands before any observation are not 0")
	}
	// Band edges: 10 ms belongs to below20, 20 ms to below100, 100 ms to above99.
	for _, f := range []float64{0.05, 9.999, 10, 19.9, 20, 99.9, 100, 250} {
		s.Observe(ms(f), 75)
	}
	for i, want := range []float64{25, 25, 25, 25} {
		if got := s.BandPercent(i); got != want {
			t.Errorf("band %d: %v%%, want %v%%", i, got, want)
		}
	}
	s.Observe(ms(3), 75) // 3 of 9 below 10 ms
	if got := s.BandPercent(0); math.Abs(got-100*3.0/9) > 1e-9 {
		t.Errorf("below10 = %v, want 33.33", got)
	}
	if s.LastMillis() != 3 || s.Responses != 9 {
		t.Errorf("resptime %v responses %d, want 3 and 9", s.LastMillis(), s.Responses)
	}
	// Below a millisecond, as on loopback: kept, not rounded to 0.
	s.Observe(184*time.Microsecond, 75)
	if got := s.LastMillis(); math.Abs(got-0.184) > 1e-12 {
		t.Errorf("184 µs is resptime %v, want 0.184", got)
	}
	s.Responses--
	s.Sent()
	if s.Requests != 1 || s.Responses != 9 {
		t.Errorf("requests %d responses %d", s.Requests, s.Responses)
	}
}
