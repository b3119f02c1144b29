package hoststats

import (
	"errors"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// errStuck is the result for a mount whose statfs did not return in time.
var errStuck = errors.New("statfs did not return in time (hung mount?); skipped until it does")

// statfser runs statfs with a time limit. A call that overruns is left
// running; its mount point is skipped until that call returns, so that a
// hung NFS server costs one goroutine, not one per refresh.
type statfser struct {
	fn      func(string, *unix.Statfs_t) error
	timeout time.Duration

	mu    sync.Mutex
	stuck map[string]*statfsCall
}

type statfsCall struct {
	path string
	done bool // guarded by statfser.mu, as are st and err
	st   unix.Statfs_t
	err  error
}

type statfsResult struct {
	st  unix.Statfs_t
	err error
}

func newStatfser(fn func(string, *unix.Statfs_t) error, timeout time.Duration) *statfser {
	return &statfser{fn: fn, timeout: timeout, stuck: map[string]*statfsCall{}}
}

// statAll runs statfs on all paths at once and waits at most the timeout.
func (s *statfser) statAll(paths []string) []statfsResult {
	out := make([]statfsResult, len(paths))
	calls := make([]*statfsCall, len(paths))
	finished := make(chan struct{}, len(paths))
	pending := 0
	s.mu.Lock()
	for i, p := range paths {
		if s.stuck[p] != nil {
			out[i].err = errStuck
			continue
		}
		calls[i] = &statfsCall{path: p}
		pending++
		go s.run(calls[i], finished)
	}
	s.mu.Unlock()
	timer := time.NewTimer(s.timeout)
	defer timer.Stop()
wait:
	for pending > 0 {
		select {
		case <-finished:
			pending--
		case <-timer.C:
			break wait
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, c := range calls {
		switch {
		case c == nil:
		case c.done:
			out[i] = statfsResult{st: c.st, err: c.err}
		default:
			s.stuck[c.path] = c
			out[i].err = errStuck
		}
	}
	return out
}

func (s *statfser) run(c *statfsCall, finished chan<- struct{}) {
	var st unix.Statfs_t
	err := s.fn(c.path, &st)
	s.mu.Lock()
	c.st, c.err, c.done = st, err, true
	if s.stuck[c.path] == c {
		delete(s.stuck, c.path)
	}
	s.mu.Unlock()
	finished <- struct{}{} // buffered for every call: never blocks
}
