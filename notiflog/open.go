package notiflog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/perfagent/subagent/client/trustdir"
)

// Open reads the log kept in the journal file ("" keeps none) with the
// limits (maxEntries 0: DefaultMaxEntries; maxAge 0: DefaultMaxAge) and
// starts its writer (stopped by Close). A missing journal starts an
// empty log at index 1, or converts LegacyFile in the same directory. A
// torn or corrupt tail (a crash during a batch) is cut off, logged and
// counted (Stats.TornBytes); a file that is not a journal, or whose
// intact records contradict each other, is an error that names it, and
// is not overwritten. Temporary files of an interrupted compaction are
// removed. Open is Load, then Start.
func Open(file string, maxEntries int, maxAge time.Duration, now func() time.Time, log *slog.Logger) (*Log, error) {
	l, err := Load(file, maxEntries, maxAge, now, log)
	if err != nil {
		return nil, err
	}
	l.Start()
	return l, nil
}

// Load is Open without writing anything: the log is read, and its changes
// wait in memory until Start repairs the file (a torn tail, temporary
// files, an old format) and starts the writer. A daemon whose start is
// refused after Load leaves the journal as it was. A Log never started
// needs no Close.
func Load(file string, maxEntries int, maxAge time.Duration, now func() time.Time, log *slog.Logger) (*Log, error) {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l := &Log{next: 1, now: now, log: log}
	if err := l.SetLimits(maxEntries, maxAge); err != nil {
		return nil, err
	}
	if file == "" {
		return l, nil
	}
	j := newJournal(l, file)
	l.j = j // the writer is not running yet: replay records its reservation
	legacy := filepath.Join(filepath.Dir(file), LegacyFile)
	b, err := trustdir.ReadFile(file)
	switch {
	case err == nil:
		if err := l.replay(j, b); err != nil {
			return nil, err
		}
	case errors.Is(err, fs.ErrNotExist):
		if err := l.readLegacy(legacy); err != nil {
			return nil, err
		}
		j.snap = true // write the journal now
	default:
		return nil, fmt.Errorf("notification log: %w", err)
	}
	if n := len(l.entries); n > 0 && cmpIndex(l.next, l.entries[n-1].Index) <= 0 {
		l.next = l.entries[n-1].Index + 1 // never reuse a kept index
	}
	if l.next == 0 {
		l.next = 1
	}
	if r := j.reserved; r != 0 && cmpIndex(r, l.next) > 0 {
		// Not stopped by Close: entries up to r may have been handed out
		// (and seen by a manager) in a batch the crash lost.
		log.Warn("notification log: the daemon did not stop cleanly; indexes a lost batch may have used are skipped",
			"file", file, "saved_next", l.next, "next", r)
		l.next = r
	}
	l.mu.Lock()
	l.trim()
	l.mu.Unlock()
	return l, nil
}

// Start writes what Load left in memory and starts the writer (stopped
// by Close); later calls do nothing.
func (l *Log) Start() {
	j := l.j
	if j == nil || !j.started.CompareAndSwap(false, true) {
		return
	}
	dir := filepath.Dir(j.file)
	removeTemps(dir, l.log, filepath.Base(j.file), LegacyFile)
	if j.replayed {
		j.openForAppend()
	}
	// Written before the first Add: indexes are reserved on disk before
	// one is handed out, so that a crash before the first batch cannot
	// hand them out again (and the journal is repaired if it must be).
	j.flush()
	if j.f != nil {
		// The journal holds the log: an old file is converted (or was,
		// before a crash).
		legacy := filepath.Join(dir, LegacyFile)
		if err := os.Remove(legacy); err == nil {
			l.log.Info("notification log converted to a journal", "from", legacy, "to", j.file, "entries", len(l.entries))
		}
	}
	go j.run()
}

// replay applies the journal b; l is not shared yet.
func (l *Log) replay(j *journal, b []byte) error {
	if !bytes.HasPrefix(b, []byte(magic)) {
		return fmt.Errorf("notification log %s: not a notification journal (it does not start with %q); move it away to start a new one", j.file, strings.TrimSpace(magic))
	}
	records := 0
	good, err := frames(b, func(p []byte, n int) error {
		r, err := decode(p)
		if err == nil {
			err = l.apply(&r)
		}
		if err != nil {
			return err
		}
		j.live.apply(&r, n)
		records++
		return nil
	})
	if err != nil {
		return fmt.Errorf("notification log %s: %w; move it away to start a new one", j.file, err)
	}
	j.size = int64(good)
	torn := len(b) - good
	if torn > 0 {
		l.stats.TornBytes = uint64(torn)
		l.log.Warn("notification log: dropped a torn or corrupt tail, the last batch written before a crash",
			"file", j.file, "dropped_bytes", torn, "records_kept", records)
	}
	j.replayed, j.torn = true, torn > 0
	return nil
}

// openForAppend opens the replayed journal for the writer, cutting off
// the tail replay dropped; on failure the writer rewrites it whole.
func (j *journal) openForAppend() {
	f, err := openAppend(j.file)
	if err == nil && j.torn {
		err = f.Truncate(j.size)
		if err == nil {
			err = f.Sync()
		}
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		j.l.mu.Lock()
		j.snap = true // the writer rewrites it whole
		j.l.mu.Unlock()
		j.report("opening", err)
		return
	}
	j.f = f
}

// apply replays one record; l is not shared yet.
func (l *Log) apply(r *record) error {
	switch r.kind {
	case recState:
		if r.idx != 0 {
			l.next = r.idx
		}
	case recAdd:
		e := r.e
		if e.Index == 0 {
			return errors.New("an entry has index 0")
		}
		if n := len(l.entries); n > 0 && cmpIndex(e.Index, l.entries[n-1].Index) <= 0 {
			return fmt.Errorf("entry %d follows entry %d", e.Index, l.entries[n-1].Index)
		}
		e.Restored = true
		l.entries = append(l.entries, e)
		if l.next = e.Index + 1; l.next == 0 {
			l.next = 1
		}
	case recOutcome:
		l.setOutcome(r.idx, r.o)
	case recReserve:
		l.j.reserved = r.idx
	case recKeep:
		n := 0
		for n < len(l.entries) && cmpIndex(l.entries[n].Index, r.idx) < 0 {
			n++
		}
		clear(l.entries[:n])
		l.entries = l.entries[n:]
	}
	return nil
}

// saved is LegacyFile's content.
type saved struct {
	Next    uint32  `json:"next"`
	Entries []Entry `json:"entries"`
}

// readLegacy reads the log of an earlier version, if there is one.
func (l *Log) readLegacy(file string) error {
	b, err := trustdir.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("notification log: %w", err)
	}
	var s saved
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("notification log %s: not a saved log (%v); move it away to start a new one", file, err)
	}
	for i := range s.Entries {
		e := &s.Entries[i]
		if e.Index == 0 || (i > 0 && cmpIndex(e.Index, s.Entries[i-1].Index) <= 0) {
			return fmt.Errorf("notification log %s: entry %d has index %d, not after the one before; move it away to start a new one", file, i+1, e.Index)
		}
		e.Restored = true
	}
	l.entries, l.next = s.Entries, max(s.Next, 1)
	return nil
}

// removeTemps removes the temporary files trustdir.WriteFile leaves when
// a crash interrupts it (".<base>.tmp-<random>").
func removeTemps(dir string, log *slog.Logger, bases ...string) {
	removed, _ := trustdir.RemoveTemps(dir, bases...) // Open's read names a problem with dir
	for _, p := range removed {
		log.Info("notification log: removed a temporary file of an interrupted write", "file", p)
	}
}
