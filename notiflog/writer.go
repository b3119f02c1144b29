package notiflog

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/client/trustdir"
	"github.com/perfagent/subagent/internal/foldlog"
)

// CommitDelay is the longest a change waits for its batch's write and
// fsync: a crash loses at most what changed in the last CommitDelay.
const CommitDelay = 100 * time.Millisecond

// Variables for tests.
var (
	commitDelay           = CommitDelay
	retryDelay            = 5 * time.Second // after a failed write, with nothing new to write
	compactFloor    int64 = 64 << 10        // a journal smaller than this is not compacted
	maxPending            = 4096            // records waiting for the writer ...
	maxPendingBytes       = 4 << 20         // ... and about their size in memory
	// A compaction keeps the newest entries that fit in half the size
	// Open reads back, leaving room to append.
	maxSnapshot        = trustdir.MaxFileSize / 2
	writeHook   func() // called by the writer before it writes
	// reserveWindow is how far ahead of the next index the journal
	// reserves: a start after a crash goes on at the reservation, so no
	// index a lost batch handed out (and a manager may have read) is
	// given to another notification. Renewed at half the window.
	reserveWindow uint32 = 1 << 16
)

// journal writes a Log's changes to its file.
type journal struct {
	l    *Log
	file string

	// Under l.mu.
	pending      []record
	pendingBytes int
	snap         bool   // the next write is a compaction: records were dropped, or a write failed
	errKind      string // of the last save error, "" after a success
	reserved     uint32 // indexes before it may be in use (recReserve); the writer's, and Open's

	// The writer's own (Open's before it starts the writer).
	f    *os.File // the journal, open for appending; nil: rewrite it
	size int64    // bytes in it
	live liveSizes
	buf  []byte

	replayed bool // Load read the file; Start opens it for appending
	torn     bool // and cuts off a tail replay dropped

	started atomic.Bool // Start ran: the writer runs
	kickc   chan struct{}
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

func newJournal(l *Log, file string) *journal {
	return &journal{l: l, file: file, kickc: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// pend queues r for the writer; l.mu is held. Past the bound the queue is
// dropped and the writer compacts instead: the log in memory has it all.
func (j *journal) pend(r record, st *Stats) {
	if j.snap {
		return
	}
	if len(j.pending) >= maxPending || j.pendingBytes >= maxPendingBytes {
		j.pending, j.pendingBytes, j.snap = nil, 0, true
		st.Overflows++
		return
	}
	j.pending = append(j.pending, r)
	j.pendingBytes += r.memSize()
}

// memSize is about the memory r holds.
func (r *record) memSize() int {
	n := 64 + len(r.o.Path) + len(r.o.Result) + 4*len(r.e.OID)
	for i := range r.e.Vars {
		v := &r.e.Vars[i]
		n += 48 + 4*len(v.OID) + len(v.Bytes) + 4*len(v.Obj)
	}
	return n
}

// kick tells the writer there is something to write.
func (j *journal) kick() {
	if j == nil {
		return
	}
	select {
	case j.kickc <- struct{}{}:
	default:
	}
}

// run is the writer: after the first change it waits CommitDelay for
// more, then writes them all in one batch.
func (j *journal) run() {
	defer close(j.done)
	defer func() {
		if j.f != nil {
			j.f.Close()
		}
	}()
	var retry <-chan time.Time
	for {
		select {
		case <-j.kickc:
		case <-retry:
		case <-j.stop:
			j.final()
			return
		}
		t := time.NewTimer(commitDelay)
		select {
		case <-t.C:
		case <-j.stop:
			t.Stop()
			j.final()
			return
		}
		retry = nil
		if !j.flush() {
			retry = time.After(retryDelay)
		}
	}
}

// flush writes what is pending: appended with one write and one fsync,
// or as a compaction when the journal would grow much bigger than the
// entries kept (or past what Open reads back), or a record was lost.
func (j *journal) flush() bool { return j.write(false) }

// final writes what is pending and reserves no index beyond the next:
// a start after Close goes on where this one stopped.
func (j *journal) final() { j.write(true) }

func (j *journal) write(final bool) bool {
	l := j.l
	l.mu.Lock()
	recs, snap, next := j.pending, j.snap, l.next
	j.pending, j.pendingBytes = nil, 0
	l.mu.Unlock()
	if r, ok := j.reservation(next, final); ok {
		// First in its batch: any entry of the batch that is read back
		// comes with the reservation that covers it.
		recs = append([]record{{kind: recReserve, idx: r}}, recs...)
	}
	if len(recs) == 0 && !snap {
		return true
	}
	if writeHook != nil {
		writeHook()
	}
	if !snap && j.f != nil {
		b, sizes := j.buf[:0], make([]int, len(recs))
		for i := range recs {
			n := len(b)
			b = appendFrame(b, &recs[i])
			sizes[i] = len(b) - n
		}
		if cap(b) <= 1<<20 {
			j.buf = b
		}
		if j.size+int64(len(b)) <= min(2*j.live.total+compactFloor, trustdir.MaxFileSize) {
			err := j.append(b)
			if err == nil {
				for i := range recs {
					j.live.apply(&recs[i], sizes[i])
					if recs[i].kind == recReserve {
						j.reserved = recs[i].idx
					}
				}
				j.done1(len(b), false)
				return true
			}
			j.report("appending to", err)
			// A torn batch would hide the ones after it: rewrite.
		}
	}
	return j.compact(final)
}

// append writes b at the journal's end and syncs it; on failure it cuts
// the journal back to what it held.
func (j *journal) append(b []byte) error {
	_, err := j.f.Write(b)
	if err == nil {
		err = j.f.Sync()
	}
	if err != nil {
		j.f.Truncate(j.size)
		j.f.Close()
		j.f = nil
		return err
	}
	j.size += int64(len(b))
	return nil
}

// compact rewrites the journal with the log as it is now, through
// trustdir.WriteFile (a synced temporary file renamed over it).
func (j *journal) compact(final bool) bool {
	l := j.l
	l.mu.Lock()
	next, ents := l.next, slices.Clone(l.entries)
	j.pending, j.pendingBytes, j.snap = nil, 0, false // all in ents
	l.mu.Unlock()
	res := j.reserved
	if r, ok := j.reservation(next, final); ok {
		res = r
	}
	b, live, first := snapshot(next, res, ents)
	if first > 0 {
		keep := next
		if first < len(ents) {
			keep = ents[first].Index
		}
		l.evictBefore(keep)
	}
	err := trustdir.WriteFile(j.file, b, 0o600)
	if err == nil {
		if j.f != nil {
			j.f.Close()
		}
		j.f, err = openAppend(j.file)
	}
	if err != nil {
		l.mu.Lock()
		j.pending, j.pendingBytes, j.snap = nil, 0, true
		l.mu.Unlock()
		j.report("compacting", err)
		return false
	}
	j.size, j.live, j.reserved = int64(len(b)), live, res
	j.done1(len(b), true)
	return true
}

// snapshot encodes a compacted journal of next and ents: the newest
// entries that fit in maxSnapshot, from ents[first]. Their sizes are
// measured newest first, so that a log too big is not encoded whole.
func snapshot(next, reserved uint32, ents []Entry) (b []byte, live liveSizes, first int) {
	b = appendFrame([]byte(magic), &record{kind: recState, idx: next})
	if reserved != 0 && cmpIndex(reserved, next) > 0 {
		b = appendFrame(b, &record{kind: recReserve, idx: reserved})
	}
	sizes := make([]int, len(ents))
	var scratch []byte
	total := len(b)
	first = len(ents)
	for first > 0 {
		scratch = appendFrame(scratch[:0], &record{kind: recAdd, e: ents[first-1]})
		if total+len(scratch) > maxSnapshot {
			break
		}
		first--
		sizes[first] = len(scratch)
		total += len(scratch)
	}
	b = slices.Grow(b, total-len(b))
	for i := first; i < len(ents); i++ {
		b = appendFrame(b, &record{kind: recAdd, e: ents[i]})
		live.add(ents[i].Index, sizes[i])
	}
	return b, live, first
}

// evictBefore drops the entries before idx that a compaction left out
// for the file's size bound.
func (l *Log) evictBefore(idx uint32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for n < len(l.entries) && cmpIndex(l.entries[n].Index, idx) < 0 {
		n++
	}
	if n > 0 {
		l.stats.Evicted += uint64(n)
		clear(l.entries[:n])
		l.entries = l.entries[n:]
		l.version++
	}
}

// reservation is the reservation to write with the next batch, if the
// one written is too close to next (or, when final, is not next itself).
func (j *journal) reservation(next uint32, final bool) (uint32, bool) {
	if final {
		return next, j.reserved != 0 && j.reserved != next
	}
	if j.reserved != 0 && cmpIndex(j.reserved, next+reserveWindow/2) >= 0 {
		return 0, false
	}
	r := next + reserveWindow
	if r == 0 {
		r = 1
	}
	return r, true
}

// openAppend opens the journal for appending, not following a link.
func openAppend(file string) (*os.File, error) {
	fd, err := unix.Open(file, unix.O_WRONLY|unix.O_APPEND|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: file, Err: err}
	}
	return os.NewFile(uintptr(fd), file), nil
}

// done1 counts a batch of n bytes written and synced.
func (j *journal) done1(n int, compaction bool) {
	l := j.l
	l.mu.Lock()
	l.stats.Written += uint64(n)
	l.stats.Batches++
	if compaction {
		l.stats.Compactions++
	}
	l.mu.Unlock()
	j.report("", nil)
}

// report serves the outcome of a write (Stats.SaveErr) and logs it once
// per change of the error's kind: the text logged names no temporary
// file, so that a full disk logs one line, not one per notification.
func (j *journal) report(op string, err error) {
	l := j.l
	msg, kind := "", ""
	if err != nil {
		kind = foldlog.Kind(err)
		msg = op + " " + j.file + ": " + kind
	}
	l.mu.Lock()
	last := j.errKind
	j.errKind, l.stats.SaveErr = kind, msg
	l.mu.Unlock()
	switch {
	case kind == last:
	case kind == "":
		l.log.Info("notification log saved again", "file", j.file)
	default:
		l.log.Warn("notification log not saved; its changes since are lost if the daemon stops", "file", j.file, "err", kind)
	}
}

// Close writes what is pending and stops the writer. The log can still
// be read and changed, in memory only. It returns the last save error.
func (l *Log) Close() error {
	j := l.j
	if j == nil || !j.started.Load() {
		return nil
	}
	j.once.Do(func() { close(j.stop) })
	<-j.done
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stats.SaveErr != "" {
		return errors.New(l.stats.SaveErr)
	}
	return nil
}
