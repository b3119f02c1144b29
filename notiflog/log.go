// Package notiflog keeps the notifications the daemon sent, as
// NOTIFICATION-LOG-MIB (RFC 3014) does: each entry has an index that
// never goes backwards (across restarts too), the sysUpTime and
// wall-clock time it was sent at, its notification OID, its VarBinds as
// sent and what each delivery path made of it. The log is bounded by a
// count and an age.
//
// It is kept in the state directory as an append-only journal
// (journal.go): Add and Outcome change the log in memory and hand a
// record to a writer goroutine, which writes what is pending with one
// write and one fsync per batch, at most CommitDelay after the first
// record (writer.go), so that a notification costs about its own size on
// disk and its caller never waits for the disk. When the journal is much
// bigger than the entries kept, the writer rewrites it with those alone
// (a synced temporary file renamed over it). A crash loses at most the
// last batch; Open drops a torn tail and says so. Start (before the
// first Add) and each batch after reserve indexes ahead (a window of
// 65,536); a start after a crash goes on past the reservation, so an
// index a lost batch handed out, which a manager may have read, never
// names another notification.
//
// Entries restored from the file serve an uptime of 0, as RFC 3014 asks
// of entries that outlive the agent's restart (their sysUpTime is of a
// previous run); their wall-clock time still tells when they were sent.
package notiflog

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

// File is the journal's name in the state directory; LegacyFile is the
// log's file of earlier versions, converted by Open.
const (
	File       = "notifications.journal"
	LegacyFile = "notifications.json"
)

// Defaults and bounds of the limits (config notification_log.*).
const (
	DefaultMaxEntries = 500
	DefaultMaxAge     = 24 * time.Hour // RFC 3014's nlmConfigGlobalAgeOut default, 1440 minutes
	MaxEntries        = 10000
	MaxVars           = 64  // VarBinds kept per entry; more are left out and counted
	MaxOutcomes       = 16  // delivery paths recorded per entry
	maxValueBytes     = 255 // of a kept OctetString, an outcome's path and result
	maxOIDLen         = 128 // sub-identifiers kept of an OID (SNMP's most), so that a record stays under maxRecord
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

	// The journal's writer (since start).
	Written     uint64 // bytes written to the journal, compactions included
	Batches     uint64 // writes, each followed by one fsync
	Compactions uint64 // journal rewritten with the kept entries alone
	Overflows   uint64 // records that outran the writer, replaced by a compaction (nothing lost)
	TornBytes   uint64 // bytes of a torn or corrupt tail Open dropped (a crash during a batch)
}

// Log is the notification log. It is safe for concurrent use.
type Log struct {
	mu      sync.Mutex
	max     int
	age     time.Duration
	next    uint32
	entries []Entry
	version uint64
	stats   Stats
	now     func() time.Time
	log     *slog.Logger

	j *journal // nil: kept in memory only
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
	l.j.kick()
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
	l.drop(n)
}

// drop forgets the n oldest entries and journals it; l.mu is held.
func (l *Log) drop(n int) {
	if n <= 0 {
		return
	}
	keep := l.next
	if n < len(l.entries) {
		keep = l.entries[n].Index
	}
	// Resliced, not moved: a full log drops one entry per Add.
	clear(l.entries[:n])
	l.entries = l.entries[n:]
	l.version++
	l.record(record{kind: recKeep, idx: keep})
}

// record hands r to the writer; l.mu is held.
func (l *Log) record(r record) {
	if l.j != nil {
		l.j.pend(r, &l.stats)
	}
}

// Add records a notification about to be sent and returns its index. The
// index wraps from 2^32-1 to 1, as nlmLogIndex does. It does not wait for
// the disk.
func (l *Log) Add(uptime time.Duration, oid asn1tree.OID, vars []asn1tree.Value, oids []asn1tree.OID) uint32 {
	e := Entry{Uptime: uptime, OID: cutOID(oid)}
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
		e.Vars = append(e.Vars, Var{OID: cutOID(oids[i]), Kind: v.Kind, Num: v.Num, Bytes: b, Obj: cutOID(v.OID)})
	}
	l.mu.Lock()
	e.Index, e.Time = l.next, l.now()
	if l.next++; l.next == 0 {
		l.next = 1
	}
	l.entries = append(l.entries, e)
	l.stats.Logged++
	l.version++
	l.record(record{kind: recAdd, e: e})
	l.trim()
	l.mu.Unlock()
	l.j.kick()
	return e.Index
}

// Outcome records what delivery path made of entry idx (replacing the
// path's earlier outcome: an inform first queued, then acknowledged). An
// entry no longer kept is ignored. It does not wait for the disk.
func (l *Log) Outcome(idx uint32, path string, ok bool, result string) {
	o := Outcome{Path: cut(path), Result: cut(result), OK: ok}
	l.mu.Lock()
	found := l.setOutcome(idx, o)
	if found {
		l.version++
		l.record(record{kind: recOutcome, idx: idx, o: o})
	}
	l.mu.Unlock()
	if found {
		l.j.kick()
	}
}

// setOutcome puts o in entry idx's outcomes; l.mu is held.
func (l *Log) setOutcome(idx uint32, o Outcome) bool {
	i, found := slices.BinarySearchFunc(l.entries, idx, func(e Entry, idx uint32) int { return cmpIndex(e.Index, idx) })
	if !found {
		return false
	}
	e := &l.entries[i]
	outs := slices.Clone(e.Outcomes) // a view may hold the old ones
	j := slices.IndexFunc(outs, func(p Outcome) bool { return p.Path == o.Path })
	switch {
	case j >= 0:
		outs[j] = o
	case len(outs) < MaxOutcomes:
		outs = append(outs, o)
	}
	e.Outcomes = outs
	return true
}

// cutOID copies o, bounded.
func cutOID(o asn1tree.OID) asn1tree.OID {
	return o[:min(len(o), maxOIDLen)].Clone()
}

// cut bounds an outcome's text, as a kept value is.
func cut(s string) string {
	if len(s) > maxValueBytes {
		return s[:maxValueBytes]
	}
	return s
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
		l.j.kick()
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
