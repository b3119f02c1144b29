package agentx

import (
	"testing"
	"testing/synctest"
	"time"
)

// The delay between attempts doubles from BackoffMin to BackoffMax, is not
// reset by a session that dies at once or lives BackoffMax, and is reset
// by one that lived longer. On the bubble's clock every gap is exact.
func TestBackoffGrowsAndResets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newPipeMaster(t)
		cfg := testConfig(m.addr)
		cfg.BackoffMin, cfg.BackoffMax = 20*time.Millisecond, 400*time.Millisecond
		r := m.start(cfg)

		// A gap is measured from one accept to the next: the drop follows
		// the accept at once.
		c := m.accept()
		last := time.Now()
		c.expect(typeOpen)
		c.c.Close()
		ms := time.Millisecond
		for i, want := range []time.Duration{20 * ms, 40 * ms, 80 * ms, 160 * ms, 320 * ms, 400 * ms, 400 * ms} {
			c = m.accept()
			if gap := time.Since(last); gap != want {
				t.Errorf("attempt %d came %v after the previous one, want %v", i+2, gap, want)
			}
			last = time.Now()
			if i == 2 {
				// A session that comes up and dies at once (a flapping
				// master) keeps the backoff growing: the next gap is 160 ms.
				c.handshake(cfg)
				settled(t, "Connected", r.sa.Connected)
			} else {
				c.expect(typeOpen)
			}
			c.c.Close()
		}

		// Sessions that lived BackoffMax, then a little longer.
		for _, tc := range []struct {
			lived, gap time.Duration
		}{{cfg.BackoffMax, cfg.BackoffMax}, {cfg.BackoffMax + time.Nanosecond, cfg.BackoffMin}} {
			c = m.accept()
			c.handshake(cfg)
			settled(t, "Connected", r.sa.Connected)
			time.Sleep(tc.lived)
			c.c.Close()
			dropped := time.Now()
			c = m.accept()
			if gap := time.Since(dropped); gap != tc.gap {
				t.Errorf("after a session that lived %v, the next attempt came %v later, want %v", tc.lived, gap, tc.gap)
			}
			c.c.Close()
		}
		if n := len(m.dials()); n != 12 {
			t.Errorf("%d dials, want 12", n)
		}
	})
}

// However long the master is away, the next attempt comes within
// BackoffMax of its return, and the failed dials are logged once.
func TestBackoffIsCapped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newPipeMaster(t)
		m.setDown(true)
		cfg := testConfig(m.addr)
		cfg.BackoffMin, cfg.BackoffMax = 10*time.Millisecond, 150*time.Millisecond
		begin := time.Now()
		r := m.start(cfg)
		const away = 1300 * time.Millisecond // uncapped, the next try would come at 2.55 s
		time.Sleep(away)
		m.setDown(false)
		c := m.accept()
		if took := time.Since(begin) - away; took != 50*time.Millisecond {
			t.Errorf("reconnected %v after the master came back, want 50ms (the attempt at 1.35 s)", took)
		}
		c.handshake(cfg)
		settled(t, "Connected", r.sa.Connected)

		ms := time.Millisecond
		want := []time.Duration{0, 10 * ms, 30 * ms, 70 * ms, 150 * ms, 300 * ms, 450 * ms, 600 * ms,
			750 * ms, 900 * ms, 1050 * ms, 1200 * ms, 1350 * ms}
		dials := m.dials()
		if len(dials) != len(want) {
			t.Fatalf("%d dials, want %d", len(dials), len(want))
		}
		for i, d := range dials {
			if at := d.at.Sub(begin); at != want[i] || (d.err == nil) != (i == len(want)-1) {
				t.Errorf("dial %d at %v (err %v), want at %v, failing but the last", i+1, at, d.err, want[i])
			}
		}
		if n := r.logs.count("cannot open a session"); n != 1 {
			t.Errorf("%d failed dials logged %d times, want once:\n%s", len(want)-1, n, r.logs)
		}
	})
}
