package rtimearm

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// A change notification held back by notifyEvery is dropped by Close:
// nothing calls OnChange after the server closed (the daemon has stopped
// then), and no timer's goroutine outlives it.
func TestNoChangeNotifiedAfterClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		s := &Server{cfg: ServerConfig{OnChange: func() { calls.Add(1) }}}
		s.notify() // at once
		s.notify() // held until notifyEvery has passed
		s.stopNotify()
		time.Sleep(2 * notifyEvery)
		synctest.Wait()
		if n := calls.Load(); n != 1 {
			t.Fatalf("OnChange called %d times, want 1: the held one came after Close", n)
		}
		s.notify()
		if n := calls.Load(); n != 1 {
			t.Fatal("OnChange called after Close")
		}
	})
}
