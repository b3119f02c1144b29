package rtimelan

import (
	"fmt"
	"testing"
	"time"
)

type send struct {
	at   time.Duration // since the start
	host string
}

func (s send) String() string { return fmt.Sprintf("%s@%v", s.host, s.at) }

// drive runs s from t0 until end on a simulated clock, with hosts() as the
// host list, and returns the sends. Bounded by the step count.
func drive(t *testing.T, s *Scheduler, hosts func() []string, end time.Duration) []send {
	t.Helper()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	var out []send
	for i := 0; i < 1_000_000 && now.Sub(t0) < end; i++ {
		h, wake := s.Step(now, hosts)
		if h != "" {
			out = append(out, send{now.Sub(t0), h})
			continue
		}
		if !wake.After(now) {
			t.Fatalf("Step at %v returned no host and wake %v, not in the future", now.Sub(t0), wake.Sub(t0))
		}
		now = wake
	}
	return out
}

func names(n int) func() []string {
	hs := make([]string, n)
	for i := range hs {
		hs[i] = fmt.Sprintf("h%d", i)
	}
	return func() []string { return hs }
}

func TestScheduleSpreadsOverTheInterval(t *testing.T) {
	s := NewScheduler(10*time.Second, 10)
	sends := drive(t, s, names(4), 30*time.Second)
	if len(sends) != 12 {
		t.Fatalf("%d sends in 3 cycles of 4 hosts: %v", len(sends), sends)
	}
	for i, sd := range sends {
		want := time.Duration(i/4)*10*time.Second + time.Duration(i%4)*2500*time.Millisecond
		if sd.at != want || sd.host != fmt.Sprintf("h%d", i%4) {
			t.Errorf("send %d: %s at %v, want h%d at %v", i, sd.host, sd.at, i%4, want)
		}
	}
	if s.Cycles != 3 || s.Skipped != 0 {
		t.Errorf("cycles %d skipped %d, want 3 and 0", s.Cycles, s.Skipped)
	}
}

func TestScheduleNeverExceedsMaxrate(t *testing.T) {
	for _, tc := range []struct{ hosts, maxrate int }{{50, 10}, {100, 10}, {7, 1}, {1000, 200}} {
		s := NewScheduler(time.Second, tc.maxrate)
		sends := drive(t, s, names(tc.hosts), 60*time.Second)
		gap := time.Second / time.Duration(tc.maxrate)
		for i := 1; i < len(sends); i++ {
			if d := sends[i].at - sends[i-1].at; d < gap {
				t.Fatalf("%d hosts at maxrate %d: sends %d and %d are %v apart, less than %v", tc.hosts, tc.maxrate, i-1, i, d, gap)
			}
		}
		// In any window of one second, at most maxrate sends.
		for i, j := 0, 0; i < len(sends); i++ {
			for sends[i].at-sends[j].at >= time.Second {
				j++
			}
			if i-j+1 > tc.maxrate {
				t.Fatalf("%d sends within one second, maxrate %d", i-j+1, tc.maxrate)
			}
		}
		// Still every host, in order, in every cycle.
		if len(sends) < tc.hosts || sends[tc.hosts-1].host != fmt.Sprintf("h%d", tc.hosts-1) {
			t.Fatalf("first cycle did not reach every host: %d sends", len(sends))
		}
	}
}

func TestScheduleSkipsTicksUntilTheCycleCompletes(t *testing.T) {
	// 25 hosts at 1 per second need 25 s; with a 10 s interval the ticks
	// at 10 s and 20 s fall within the cycle and are skipped, the next
	// cycle starts at 30 s.
	s := NewScheduler(10*time.Second, 1)
	sends := drive(t, s, names(25), 90*time.Second)
	starts := []time.Duration{}
	for _, sd := range sends {
		if sd.host == "h0" {
			starts = append(starts, sd.at)
		}
	}
	want := []time.Duration{0, 30 * time.Second, 60 * time.Second}
	if fmt.Sprint(starts) != fmt.Sprint(want) {
		t.Errorf("cycles started at %v, want %v", starts, want)
	}
	if s.Cycles != 3 || s.Skipped != 6 {
		t.Errorf("cycles %d skipped %d, want 3 and 6", s.Cycles, s.Skipped)
	}
	// The last host of the first cycle is sent at 24 s: spacing is the
	// rate limit, not the interval.
	if sends[24].at != 24*time.Second {
		t.Errorf("h24 sent at %v, want 24s", sends[24].at)
	}
}

func TestScheduleLateWakeSkipsMissedTicks(t *testing.T) {
	s := NewScheduler(10*time.Second, 10)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	one := func() []string { return []string{"a"} }
	if h, _ := s.Step(t0, one); h != "a" {
		t.Fatal("no send at the first tick")
	}
	// The process was stopped for 35 s: the ticks at 10, 20 and 30 s
	// passed; the cycle starts now, once, on the 30 s tick.
	h, wake := s.Step(t0.Add(35*time.Second), one)
	if h != "a" || wake != t0.Add(40*time.Second) || s.Skipped != 2 {
		t.Errorf("after a stop: host %q wake %v skipped %d, want a, 40s, 2", h, wake.Sub(t0), s.Skipped)
	}
}

func TestScheduleTakesNewHostsAndSettingsAtTheNextCycle(t *testing.T) {
	s := NewScheduler(10*time.Second, 10)
	hosts := []string{"a"}
	list := func() []string { return hosts }
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.Step(t0, list)
	hosts = []string{"a", "b"}
	s.Set(4*time.Second, 10)
	var got []send
	now := t0
	for i := 0; i < 100 && now.Sub(t0) < 15*time.Second; i++ {
		h, wake := s.Step(now, list)
		if h != "" {
			got = append(got, send{now.Sub(t0), h})
			continue
		}
		now = wake
	}
	// The tick at 10 s was set with the old interval; then every 4 s.
	want := "[a@10s b@12s a@14s]"
	if fmt.Sprint(got) != want {
		t.Errorf("sends %v, want %s", got, want)
	}
}
