// Package foldlog folds repeated log lines: an event logged the first
// time a source meets its reason, then at most once a minute with the
// number of events since, and a source's lines, whatever the reasons, at
// most MaxLines a minute. A peer retrying in a loop, varying what it
// sends, or a disk that stays full cannot flood the log. The Unix
// sockets' refusals (internal/unixsock), the control socket's failed
// changes, refused SNMP SETs and failed saves log through one.
package foldlog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// Bounds of a Log.
const (
	// Every is the least time between two lines of one source and reason.
	Every = time.Minute
	// MaxLines is the most lines of one source a minute.
	MaxLines = 10
	// MaxKeys bounds the memory of the reasons met (and of the sources
	// counted); past it the memory starts over, and each reason is logged
	// once more, within its source's bound.
	MaxKeys = 1024
	// MaxText is the most bytes of a peer's text a log line quotes (Text).
	MaxText = 200
)

// Source is whom events are counted for: ID bounds its lines (a uid;
// 0 for events without one), Attrs name it in the line, first.
type Source struct {
	ID    uint64
	Attrs []any
}

// Log folds the lines it is given into a slog.Logger at one level.
// Safe for concurrent use.
type Log struct {
	log   *slog.Logger
	level slog.Level
	// Now is the clock, time.Now; tests set their own before the first Note.
	Now func() time.Time

	mu      sync.Mutex
	seen    map[key]*count
	sources map[uint64]*lines
}

type key struct {
	src         uint64
	msg, reason string
}

type count struct {
	since  int // events not yet logged
	logged time.Time
}

// lines counts the lines of one source in the current minute.
type lines struct {
	start time.Time
	n     int
}

// New returns a Log writing to log at level.
func New(log *slog.Logger, level slog.Level) *Log {
	return &Log{log: log, level: level, Now: time.Now, seen: map[key]*count{}, sources: map[uint64]*lines{}}
}

// Note counts an event of src for reason and, when due, logs msg with
// src's attributes, the reason, the count since the last line and attrs.
// Events are folded by source, msg and reason: the reason must not hold
// what a peer sent or a random name (put such text, cut with Text, in
// attrs; an error's Kind is stable).
func (l *Log) Note(src Source, msg, reason string, attrs ...any) {
	reason = Text(reason)
	k := key{src.ID, msg, reason}
	now := l.Now()
	l.mu.Lock()
	e := l.seen[k]
	if e == nil {
		if len(l.seen) >= MaxKeys {
			clear(l.seen)
		}
		e = &count{}
		l.seen[k] = e
	}
	e.since++
	n := e.since
	due := (e.logged.IsZero() || now.Sub(e.logged) >= Every) && l.sourceMay(src.ID, now)
	if due {
		e.since, e.logged = 0, now
	}
	l.mu.Unlock()
	if due {
		args := make([]any, 0, len(src.Attrs)+4+len(attrs))
		args = append(append(args, src.Attrs...), "reason", reason, "count", n)
		l.log.Log(context.Background(), l.level, msg, append(args, attrs...)...)
	}
}

// sourceMay tells whether src may have one more line this minute, and if
// so counts it; l.mu is held.
func (l *Log) sourceMay(src uint64, now time.Time) bool {
	u := l.sources[src]
	if u == nil {
		if len(l.sources) >= MaxKeys {
			clear(l.sources)
		}
		u = &lines{}
		l.sources[src] = u
	}
	if now.Sub(u.start) >= Every {
		u.start, u.n = now, 0
	}
	if u.n >= MaxLines {
		return false
	}
	u.n++
	return true
}

// Text is s for a log line: at most MaxText bytes of it, cut at a
// character, with how much was left out.
func Text(s string) string {
	if len(s) <= MaxText {
		return s
	}
	cut := Cut(s, MaxText)
	return fmt.Sprintf("%s…(%d more bytes)", cut, len(s)-len(cut))
}

// Cut is s cut to at most n bytes at a character's start.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Kind is what went wrong in err without the file names: the errno, or
// the error inside a path error, else the whole text. A failed save
// repeated reads the same each time, so that its lines fold.
func Kind(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
