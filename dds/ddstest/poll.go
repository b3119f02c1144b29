package ddstest

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
)

// Poller reads paths over and over from whichever daemon current returns
// (tests swap it as they restart the daemon) and checks every reading
// with CheckBatch against the one before, until Stop.
type Poller struct {
	Polls    atomic.Int64 // readings taken, from any daemon or none
	served   atomic.Int64 // readings served by the daemon current since Restarted
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{} // closed when polling ends, err set
	err      error
}

// Poll starts polling.
func Poll(current func() *Daemon, paths []string) *Poller {
	p := &Poller{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		var last uint64
		for {
			select {
			case <-p.stop:
				return
			default:
			}
			d := current()
			v, ok := d.ReadAll(paths)
			p.Polls.Add(1)
			if !ok {
				continue // between daemons, or not replayed yet
			}
			if d == current() {
				p.served.Add(1)
			}
			if p.err = CheckBatch(v, last); p.err != nil {
				return
			}
			last = v[0]
		}
	}()
	return p
}

// WaitServed waits until the current daemon has served 20 readings; a
// reading that failed its check runs cleanup, then fails the test.
func (p *Poller) WaitServed(t *testing.T, what string, cleanup func()) {
	t.Helper()
	testutil.Eventually(t, what, 10*time.Second, func() bool {
		select {
		case <-p.done:
			cleanup()
			t.Fatal(p.err)
		default:
		}
		return p.served.Load() >= 20
	})
}

// Restarted starts counting the readings of a new daemon.
func (p *Poller) Restarted() { p.served.Store(0) }

// Stop ends the polling and tells whether a reading failed its check.
func (p *Poller) Stop() error {
	p.stopOnce.Do(func() { close(p.stop) })
	<-p.done
	return p.err
}
