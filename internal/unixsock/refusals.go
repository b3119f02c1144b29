package unixsock

import (
	"fmt"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"
)

// RefusalLog logs a refusal the first time a user meets a reason, then at
// most once a minute with the number of refusals since; and a user's
// lines, whatever the reasons, at most MaxRefusalLines a minute. A peer
// retrying in a loop, or varying what it sends, cannot flood the log.
// Every socket's listener logs its refusals through one, and so do the
// handlers that refuse requests (the control socket's changes).
type RefusalLog struct {
	log *slog.Logger
	msg string // of Listener's refusals (note)
	now func() time.Time

	mu    sync.Mutex
	seen  map[refusalKey]*refusalCount
	users map[uint32]*userLines
}

// refusalLog is the listener's name for it.
type refusalLog = RefusalLog

type refusalKey struct {
	uid    uint32
	reason string
}

type refusalCount struct {
	since  int // refusals not yet logged
	logged time.Time
}

// userLines counts the lines of one user in the current minute.
type userLines struct {
	start time.Time
	n     int
}

// maxRefusalKeys bounds the memory of who was refused (and of the users
// counted); past it the memory starts over, and each key is logged once
// more, within its user's bound.
const (
	maxRefusalKeys = 1024
	refusalEvery   = time.Minute
	// MaxRefusalLines is the most refusal lines of one user a minute.
	MaxRefusalLines = 10
	// MaxLogText is the most bytes of a peer's text a log line quotes.
	MaxLogText = 200
)

// NewRefusalLog returns a refusal log writing to log.
func NewRefusalLog(log *slog.Logger) *RefusalLog {
	return &RefusalLog{log: log, now: time.Now, seen: map[refusalKey]*refusalCount{}, users: map[uint32]*userLines{}}
}

func newRefusalLog(log *slog.Logger, name string) *RefusalLog {
	r := NewRefusalLog(log)
	r.msg = name + " socket: refused a connection"
	return r
}

func (r *RefusalLog) note(p Peer, reason string) { r.Note(p, r.msg, reason) }

// Note counts a refusal of p for reason and logs it at WARN with msg,
// the uid, pid, reason, the count since the last line and attrs, when
// due. The reason is what refusals are counted by: it should not hold
// what the peer sent (put that, cut with LogText, in attrs).
func (r *RefusalLog) Note(p Peer, msg, reason string, attrs ...any) {
	reason = LogText(reason)
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
	due := (e.logged.IsZero() || now.Sub(e.logged) >= refusalEvery) && r.userMay(p.UID, now)
	if due {
		e.since, e.logged = 0, now
	}
	r.mu.Unlock()
	if due {
		r.log.Warn(msg, append([]any{"uid", int64(p.UID), "pid", p.PID, "reason", reason, "count", n}, attrs...)...)
	}
}

// userMay tells whether uid may have one more line this minute, and if
// so counts it.
func (r *RefusalLog) userMay(uid uint32, now time.Time) bool {
	u := r.users[uid]
	if u == nil {
		if len(r.users) >= maxRefusalKeys {
			clear(r.users)
		}
		u = &userLines{}
		r.users[uid] = u
	}
	if now.Sub(u.start) >= refusalEvery {
		u.start, u.n = now, 0
	}
	if u.n >= MaxRefusalLines {
		return false
	}
	u.n++
	return true
}

// LogText is s for a log line: at most MaxLogText bytes of it, cut at a
// character, with how much was left out.
func LogText(s string) string {
	if len(s) <= MaxLogText {
		return s
	}
	cut := MaxLogText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s…(%d more bytes)", s[:cut], len(s)-cut)
}
