package unixsock

import (
	"log/slog"
	"sync"
	"time"
)

// refusalLog logs a refusal the first time a user meets a reason, then at
// most once a minute with the number of refusals since: a peer retrying in
// a loop cannot flood the log.
type refusalLog struct {
	log  *slog.Logger
	name string
	now  func() time.Time

	mu   sync.Mutex
	seen map[refusalKey]*refusalCount
}

type refusalKey struct {
	uid    uint32
	reason string
}

type refusalCount struct {
	since  int // refusals not yet logged
	logged time.Time
}

// maxRefusalKeys bounds the memory of who was refused; past it the
// memory starts over (and each key is logged once more).
const (
	maxRefusalKeys = 1024
	refusalEvery   = time.Minute
)

func newRefusalLog(log *slog.Logger, name string) *refusalLog {
	return &refusalLog{log: log, name: name, now: time.Now, seen: map[refusalKey]*refusalCount{}}
}

func (r *refusalLog) note(p Peer, reason string) {
	k := refusalKey{p.UID, reason}
	now := r.now()
	r.mu.Lock()
	e := r.seen[k]
	if e == nil {
		if len(r.seen) >= maxRefusalKeys {
			clear(r.seen)
		}
		e = &refusalCount{}
		r.seen[k] = e
	}
	e.since++
	n := e.since
	due := e.logged.IsZero() || now.Sub(e.logged) >= refusalEvery
	if due {
		e.since, e.logged = 0, now
	}
	r.mu.Unlock()
	if due {
		r.log.Warn(r.name+" socket: refused a connection", "uid", int64(p.UID), "pid", p.PID, "reason", reason, "count", n)
	}
}
