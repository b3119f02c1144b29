package agentx

import (
	"os"
	"testing"
	"time"
)

// The delay between attempts doubles from BackoffMin to BackoffMax, is not
// reset by a session that dies at once, and is reset by one that lived.
func TestBackoffGrowsAndResets(t *testing.T) {
	m := newFakeMaster(t)
	cfg := testConfig(m.addr)
	cfg.BackoffMin, cfg.BackoffMax = 20*time.Millisecond, 400*time.Millisecond
	const slack = 250 * time.Millisecond // scheduling on a loaded machine
	r := start(t, cfg)

	// A gap is measured from one accept to the next: the subagent dials
	// again no sooner than the delay after the drop, which follows the
	// accept.
	c := m.accept()
	last := time.Now()
	c.expect(typeOpen)
	c.c.Close()
	ms := time.Millisecond
	for i, want := range []time.Duration{20 * ms, 40 * ms, 80 * ms, 160 * ms, 320 * ms, 400 * ms, 400 * ms} {
		c = m.accept()
		now := time.Now()
		if gap := now.Sub(last); gap < want || gap > want+slack {
			t.Errorf("attempt %d came %v after the previous one, want %v", i+1, gap.Round(ms), want)
		}
		last = now
		if i == 2 {
			// A session that comes up and dies at once (a flapping
			// master) keeps the backoff growing: the next gap is 160 ms.
			c.handshake(cfg)
			waitFor(t, "Connected", r.sa.Connected)
		} else {
			c.expect(typeOpen)
		}
		c.c.Close()
	}

	c = m.accept()
	c.handshake(cfg)
	waitFor(t, "Connected", r.sa.Connected)
	time.Sleep(cfg.BackoffMax + 100*ms)
	c.c.Close()
	dropped := time.Now()
	c = m.accept()
	if gap := time.Since(dropped); gap > cfg.BackoffMax-100*ms {
		t.Errorf("after a session that lived, the next attempt came %v later, want about %v", gap.Round(ms), cfg.BackoffMin)
	}
	c.handshake(cfg)
}

// However long the master is away, the next attempt comes within
// BackoffMax of its return.
func TestBackoffIsCapped(t *testing.T) {
	m := newFakeMaster(t)
	m.ln.Close()
	os.Remove(m.path)
	cfg := testConfig(m.addr)
	cfg.BackoffMin, cfg.BackoffMax = 10*time.Millisecond, 150*time.Millisecond
	r := start(t, cfg)
	time.Sleep(1300 * time.Millisecond) // uncapped, the next try would come at 2.55 s
	m.listen()
	back := time.Now()
	c := m.accept()
	if took := time.Since(back); took > cfg.BackoffMax+250*time.Millisecond {
		t.Errorf("reconnected %v after the master came back, cap %v", took, cfg.BackoffMax)
	}
	c.handshake(cfg)
	waitFor(t, "Connected", r.sa.Connected)
	if n := r.logs.count("cannot open a session"); n != 1 {
		t.Errorf("about 10 failed dials logged %d times, want once:\n%s", n, r.logs)
	}
}
