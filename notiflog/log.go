// Package notiflog keeps the notifications the daemon sent, as
// NOTIFICATION-LOG-MIB (RFC 3014) does: each entry has an index that
// never goes backwards (across restarts too: the next index is saved with
// the entries), the sysUpTime and wall-clock time it was sent at, its
// notification OID, its VarBinds as sent and what each delivery path made
// of it. The log is bounded by a count and an age and kept in the state
// directory, written with trustdir.WriteFile (a synced temporary file
// renamed over the old one), so a crash leaves the old file or the new.
//
// Entries restored from the file serve an uptime of 0, as RFC 3014 asks
// of entries that outlive the agent's restart (their sysUpTime is of a
// previous run); their wall-clock time still tells when they were sent.
package notiflog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/trustdir"
)

// File is the log's name in the state directory.
const File = "notifications.json"

// Defaults and bounds of the limits (config notification_log.*).
const (
	DefaultMaxEntries = 500
	DefaultMaxAge     = 24 * time.Hour // RFC 3014's nlmConfigGlobalAgeOut default, 1440 minutes
	MaxEntries        = 10000
	MaxVars           = 64  // VarBinds kept per entry; more are left out and counted
	MaxOutcomes       = 16  // delivery paths recorded per entry
	maxValueBytes     = 255 // of a kept OctetString
)

// Var is one VarBind as sent.
type Var struct {
	OID   asn1tree.OID  `json:"oid"`
	Kind  asn1tree.Kind `json:"kind"`
	Num   uint64        `json:"num,omitempty"`
	Bytes []byte        `json:"bytes,omitempty"` // OctetString
	Obj   asn1tree.OID  `json:"obj,omitempty"`   // ObjectIdentifier
}

// Value is the VarBind's value.
func (v Var) Value() asn1tree.Value {
	return asn1tree.Value{Kind: v.Kind, Num: v.Num, Str: string(v.Bytes), OID: v.Obj}
}

// Outcome is what one delivery path made of an entry.
type Outcome struct {
	Path   string `json:"path"`   // "master", "v2c inform 127.0.0.1:162"
	Result string `json:"result"` // "sent", "acknowledged", "failed: ...", "queued"
	OK     bool   `json:"ok"`
}

// Entry is one notification sent.
type Entry struct {
	Index    uint32        `json:"index"`
	Uptime   time.Duration `json:"uptime"` // sysUpTime when sent
	Time     time.Time     `json:"time"`
	OID      asn1tree.OID  `json:"oid"` // snmpTrapOID.0
	Vars     []Var         `json:"vars"`
	Omitted  int           `json:"omitted,omitempty"` // VarBinds beyond MaxVars
	Outcomes []Outcome     `json:"outcomes,omitempty"`
	// Restored: read from the file at start; its Uptime is of a previous run.
	Restored bool `json:"-"`
}

// Stats count what the log did.
type Stats struct {
	Logged  uint64 // entries added since start
	AgedOut uint64 // removed for age
	Evicted uint64 // removed for the count limit (or the file's size)
	SaveErr string // last error saving the file; "" when the last save succeeded
}

// Log is the notification log. It is safe for concurrent use.
type Log struct {
	mu      sync.Mutex
	file    string
	max     int
	age     time.Duration
	next    uint32
	entries []Entry
	version uint64
	stats   Stats
	now     func() time.Time
	log     *slog.Logger
	saveMu  sync.Mutex // orders the file writes
}

type saved struct {
	Next    uint32  `json:"next"`
	Entries []Entry `json:"entries"`
}

// Open reads the log kept in file ("" keeps none) with the limits
// (maxEntries 0: DefaultMaxEntries; maxAge 0: DefaultMaxAge). A missing
// file starts an empty log at index 1; an unreadable one is an error that
// names it, and is not overwritten.
func Open(file string, maxEntries int, maxAge time.Duration, now func() time.Time, log *slog.Logger) (*Log, error) {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l := &Log{file: file, next: 1, now: now, log: log}
	if err := l.SetLimits(maxEntries, maxAge); err != nil {
		return nil, err
	}
	if file == "" {
		return l, nil
	}
	b, err := trustdir.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return nil, fmt.Errorf("notification log: %w", err)
	}
	var s saved
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("notification log %s: not a saved log (%v); move it away to start a new one", file, err)
	}
	for i := range s.Entries {
		e := &s.Entries[i]
		if e.Index == 0 || (i > 0 && cmpIndex(e.Index, s.Entries[i-1].Index) <= 0) {
			return nil, fmt.Errorf("notification log %s: entry %d has index %d, not after the one before; move it away to start a new one", file, i+1, e.Index)
		}
		e.Restored = true
	}
	l.entries, l.next = s.Entries, max(s.Next, 1)
	if n := len(l.entries); n > 0 && cmpIndex(l.next, l.entries[n-1].Index) <= 0 {
		l.next = l.entries[n-1].Index + 1 // never reuse a kept index
	}
	l.trim()
	return l, nil
}

// SetLimits changes the bounds: at most maxEntries entries (1 to
// MaxEntries; 0 the default), none older than maxAge (a minute to 30
// days; 0 the default).
func (l *Log) SetLimits(maxEntries int, maxAge time.Duration) error {
	if maxEntries == 0 {
		maxEntries = DefaultMaxEntries
	}
	if maxAge == 0 {
		maxAge = DefaultMaxAge
	}
	if err := CheckLimits(maxEntries, maxAge); err != nil {
		return err
	}
	l.mu.Lock()
	l.max, l.age = maxEntries, maxAge
	l.trim()
	l.mu.Unlock()
	return nil
}

// CheckLimits is the one validation of the limits; the error names the key.
func CheckLimits(maxEntries int, maxAge time.Duration) error {
	if maxEntries < 0 || maxEntries > MaxEntries {
		return fmt.Errorf("entries: %d is not from 1 to %d (0: %d)", maxEntries, MaxEntries, DefaultMaxEntries)
	}
	if maxAge != 0 && (maxAge < time.Minute || maxAge > 30*24*time.Hour) {
		return fmt.Errorf("max_age: %v is not from 1m to 720h (0: %v)", maxAge, DefaultMaxAge)
	}
	return nil
}

// trim drops entries beyond the limits, oldest first; l.mu is held.
func (l *Log) trim() {
	cut := l.now().Add(-l.age)
	n := 0
	for n < len(l.entries) && l.entries[n].Time.Before(cut) {
		n++
	}
	l.stats.AgedOut += uint64(n)
	if over := len(l.entries) - n - l.max; over > 0 {
		n += over
		l.stats.Evicted += uint64(over)
	}
	if n > 0 {
		l.entries = slices.Delete(l.entries, 0, n)
		l.version++
	}
}

// Add records a notification about to be sent and returns its index. The
// index wraps from 2^32-1 to 1, as nlmLogIndex does.
func (l *Log) Add(uptime time.Duration, oid asn1tree.OID, vars []asn1tree.Value, oids []asn1tree.OID) uint32 {
	e := Entry{Uptime: uptime, OID: oid.Clone()}
	for i := range vars {
		if len(e.Vars) == MaxVars {
			e.Omitted = len(vars) - MaxVars
			break
		}
		v := vars[i]
		b := []byte(v.Str)
		if len(b) > maxValueBytes {
			b = b[:maxValueBytes]
		}
		e.Vars = append(e.Vars, Var{OID: oids[i].Clone(), Kind: v.Kind, Num: v.Num, Bytes: b, Obj: v.OID.Clone()})
	}
	l.mu.Lock()
	e.Index, e.Time = l.next, l.now()
	if l.next++; l.next == 0 {
		l.next = 1
	}
	l.entries = append(l.entries, e)
	l.stats.Logged++
	l.version++
	l.trim()
	l.mu.Unlock()
	l.save()
	return e.Index
}

// Outcome records what delivery path made of entry idx (replacing the
// path's earlier outcome: an inform first queued, then acknowledged). An
// entry no longer kept is ignored.
func (l *Log) Outcome(idx uint32, path string, ok bool, result string) {
	l.mu.Lock()
	i, found := slices.BinarySearchFunc(l.entries, idx, func(e Entry, idx uint32) int { return cmpIndex(e.Index, idx) })
	if !found {
		l.mu.Unlock()
		return
	}
	e := &l.entries[i]
	o := Outcome{Path: path, Result: result, OK: ok}
	outs := slices.Clone(e.Outcomes) // a view may hold the old ones
	j := slices.IndexFunc(outs, func(o Outcome) bool { return o.Path == path })
	switch {
	case j >= 0:
		outs[j] = o
	case len(outs) < MaxOutcomes:
		outs = append(outs, o)
	}
	e.Outcomes = outs
	l.version++
	l.mu.Unlock()
	l.save()
}

// cmpIndex orders indexes, one that wrapped after the others.
func cmpIndex(a, b uint32) int {
	switch d := int32(a - b); {
	case d < 0:
		return -1
	case d > 0:
		return 1
	}
	return 0
}

// View is what the log holds now, for serving.
type View struct {
	Entries []Entry // oldest first; a copy, but its Vars and Outcomes are shared: not to be modified
	Next    uint32
	Max     int
	Age     time.Duration
	Stats   Stats
	Version uint64
}

// View returns the log's entries and counters. The entries are copied:
// the log's own move when old ones are dropped (trim) and take new
// outcomes, while a view is read without the lock.
func (l *Log) View() View {
	l.mu.Lock()
	defer l.mu.Unlock()
	return View{Entries: slices.Clone(l.entries), Next: l.next, Max: l.max, Age: l.age, Stats: l.stats, Version: l.version}
}

// Version changes whenever the entries do.
func (l *Log) Version() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.version
}

// Expire drops entries past the age limit (called now and then).
func (l *Log) Expire() {
	l.mu.Lock()
	v := l.version
	l.trim()
	changed := v != l.version
	l.mu.Unlock()
	if changed {
		l.save()
	}
}

// save writes the log; an error is logged once per change and served.
func (l *Log) save() {
	if l.file == "" {
		return
	}
	l.saveMu.Lock()
	defer l.saveMu.Unlock()
	l.mu.Lock()
	b, err := l.marshal()
	l.mu.Unlock()
	if err == nil {
		err = trustdir.WriteFile(l.file, b, 0o600)
	}
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	l.mu.Lock()
	last := l.stats.SaveErr
	l.stats.SaveErr = msg
	l.mu.Unlock()
	if msg != last && msg != "" {
		l.log.Warn("notification log not saved; it will be lost at a restart", "err", msg)
	}
}

// marshal encodes the log for its file. Entries that would make the file
// bigger than Open reads back (trustdir.MaxFileSize: a start would fail)
// are evicted, oldest first; l.mu is held.
func (l *Log) marshal() ([]byte, error) {
	for {
		b, err := json.Marshal(saved{Next: l.next, Entries: l.entries})
		if err != nil || len(b) <= trustdir.MaxFileSize || len(l.entries) == 0 {
			return b, err
		}
		// Keep a share of the entries a little below the share that fits.
		n := len(l.entries)
		keep := min(int(int64(n)*trustdir.MaxFileSize/int64(len(b))*9/10), n-1)
		l.entries = slices.Delete(l.entries, 0, n-keep)
		l.stats.Evicted += uint64(n - keep)
		l.version++
	}
}

// Outcomes writes an entry's outcomes as "path: result; ...", cut at 255
// octets.
func Outcomes(e *Entry) string {
	var sb strings.Builder
	for i, o := range e.Outcomes {
		if i > 0 {
			sb.WriteString("; ")
		}
		sb.WriteString(o.Path + ": " + o.Result)
	}
	s := sb.String()
	if len(s) > 255 {
		s = s[:252] + "..."
	}
	return s
}
