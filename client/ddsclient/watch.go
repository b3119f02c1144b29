package ddsclient

import (
	"time"

	"github.com/perfagent/subagent/client/spmierr"
)

// maxBackoff bounds the watcher's wait after failed reconnects.
const maxBackoff = time.Minute

// watch calls Check every interval; after a failure it waits twice as
// long as before, up to maxBackoff. It ends at Exit or SiShGoAway.
func (s *Supplier) watch(every time.Duration) {
	defer close(s.watchDone)
	wait := every
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		switch err := s.Check(); {
		case err == nil:
			wait = every
		case spmierr.CodeOf(err) == spmierr.SiAssumedDead, spmierr.CodeOf(err) == spmierr.SiNotInit && s.isExited():
			return
		default:
			wait = min(2*wait, max(maxBackoff, every))
		}
		t.Reset(wait)
	}
}

func (s *Supplier) isExited() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exited
}

// stopWatch ends the watcher and waits for it; s.mu must not be held.
func (s *Supplier) stopWatch() {
	if s.stop == nil {
		return
	}
	s.stopOnce.Do(func() { close(s.stop) })
	<-s.watchDone
}
