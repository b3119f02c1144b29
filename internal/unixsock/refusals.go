package unixsock

import (
	"log/slog"

	"github.com/perfagent/subagent/internal/foldlog"
)

// RefusalLog logs refusals at WARN folded per user and reason
// (foldlog): the first time a user meets a reason, then at most once a
// minute with the number of refusals since, and a user's lines at most
// MaxRefusalLines a minute. Every socket's listener logs its refusals
// through one, and so do the handlers that refuse requests (the control
// socket's changes).
type RefusalLog struct {
	fold *foldlog.Log
	msg  string // of Listener's refusals (note)
}

// refusalLog is the listener's name for it.
type refusalLog = RefusalLog

const (
	refusalEvery = foldlog.Every
	// MaxRefusalLines is the most refusal lines of one user a minute.
	MaxRefusalLines = foldlog.MaxLines
	// MaxLogText is the most bytes of a peer's text a log line quotes.
	MaxLogText = foldlog.MaxText
)

// NewRefusalLog returns a refusal log writing to log.
func NewRefusalLog(log *slog.Logger) *RefusalLog {
	return &RefusalLog{fold: foldlog.New(log, slog.LevelWarn)}
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
	r.fold.Note(PeerSource(p), msg, reason, attrs...)
}

// PeerSource is p as a foldlog source: counted by uid, named by uid and
// pid.
func PeerSource(p Peer) foldlog.Source {
	return foldlog.Source{ID: uint64(p.UID), Attrs: []any{"uid", int64(p.UID), "pid", p.PID}}
}

// LogText is s for a log line: at most MaxLogText bytes of it, cut at a
// character, with how much was left out (foldlog.Text).
func LogText(s string) string { return foldlog.Text(s) }
