package spmi

import (
	"testing"
	"testing/synctest"
	"time"
)

// shaped is live100k with a shape the test changes: 0 serves nothing.
type shaped struct {
	*live100k
	shape int
}

func (s *shaped) Shape() any { return s.shape }
func (s *shaped) Collect(b *Builder) error {
	if s.shape == 0 {
		return nil
	}
	return s.live100k.Collect(b)
}

// When a large part goes, memory is returned again every few seconds
// while something (an AgentX session's cached view) still holds a
// snapshot with it, and no more once it has been collected.
func TestMemoryReturnedOnceTheOldTreeIsLetGo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &shaped{live100k: newLive100k(), shape: 1}
		h := NewHierarchy(Config{Base: testBase})
		calls := &h.mem.returns
		h.Add(p)
		held := h.Refresh() // as a front end would hold it
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		calls.Store(0)

		p.shape = 0
		if s := h.Refresh(); s.NumStats != 0 {
			t.Fatalf("%d statistics after the suppliers left", s.NumStats)
		}
		time.Sleep(20 * time.Second)
		synctest.Wait()
		if n := calls.Load(); n < 4 {
			t.Fatalf("memory returned %d times in 20 s while the old tree was held, want it retried", n)
		}
		if held.NumStats != 100000 {
			t.Fatal(held.NumStats)
		}
		held = nil
		time.Sleep(6 * time.Second) // the next try finds it collected
		synctest.Wait()
		n := calls.Load()
		time.Sleep(time.Minute)
		synctest.Wait()
		if m := calls.Load(); m != n {
			t.Fatalf("memory returned %d more times after the old tree was collected", m-n)
		}
	})
}

// Refreshes that ask one after another (suppliers registering in turn)
// share one loop: memory is returned at once and 2 s later, not ten
// times each.
func TestMemoryReturnedByOneLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var m memoryReturner
		for range 10 {
			m.request(nil)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := m.returns.Load(); n != 2 {
			t.Fatalf("memory returned %d times for 10 requests at once, want 2", n)
		}
	})
}

// Close stops the loop at once, between two returns, and later requests
// start none.
func TestMemoryReturnerClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var m memoryReturner
		m.request(nil)
		synctest.Wait() // returned at once; the next one is due in 2 s
		m.close()
		m.request(nil)
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := m.returns.Load(); n != 1 {
			t.Fatalf("memory returned %d times, want 1: the loop went on after close", n)
		}
	})
}
