package notiflog

import (
	"bytes"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

// syncBuf is a log output tests read.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func logTo(b *syncBuf) *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

var hotsetBase = asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1}

// hotsetNote is a notification shaped like a hotset's
// (daemon.Notification): its eight objects, then four hot items with
// their served values.
func hotsetNote(i int) (vals []asn1tree.Value, oids []asn1tree.OID) {
	vals = []asn1tree.Value{asn1tree.Str(fmt.Sprintf("pumps-%d", i%7)), asn1tree.Str("DDS/pumps/+/feed"),
		asn1tree.Int(90), asn1tree.Int(2), asn1tree.Str(fmt.Sprintf("peer-%05d", i)), asn1tree.Str("97.5"),
		asn1tree.Str("percent"), asn1tree.Str(fmt.Sprintf("peer-%05d 97.5, peer-%05d 95.1, peer-%05d 93, peer-%05d 91.2", i, i+1, i+2, i+3))}
	for k := range vals {
		oids = append(oids, hotsetBase.Append(14, 0, uint32(k+1), 0))
	}
	for k := range 4 {
		vals = append(vals, asn1tree.Value{Kind: asn1tree.Gauge32, Num: uint64(975 - k)})
		oids = append(oids, hotsetBase.Append(20, 3, 1, 5, uint32(i+k), 1))
	}
	return vals, oids
}

// addHotset adds a hotset's notification and the outcomes of three
// paths, one of them an inform first pending.
func addHotset(l *Log, i int) uint32 {
	vals, oids := hotsetNote(i)
	idx := l.Add(time.Duration(i)*time.Second, hotsetBase.Append(0, 21), vals, oids)
	l.Outcome(idx, "v2c trap 127.0.0.1:162", true, "sent")
	l.Outcome(idx, "v3 inform 192.0.2.7:162", false, Pending)
	l.Outcome(idx, "v3 inform 192.0.2.7:162", true, "acknowledged")
	l.Outcome(idx, "master", true, "taken by the master")
	return idx
}

// hold makes the writer wait, before it writes, until released.
func hold(t *testing.T) (held <-chan struct{}, release func()) {
	h, r := make(chan struct{}, 1), make(chan struct{})
	writeHook = func() {
		select {
		case h <- struct{}{}:
		default:
		}
		<-r
	}
	var once sync.Once
	release = func() { once.Do(func() { close(r) }) }
	t.Cleanup(func() { release(); writeHook = nil })
	return h, release
}

// Add and Outcome return while the writer is held: they change the log
// in memory and the file only when the writer runs.
func TestAddDoesNotWaitForTheDisk(t *testing.T) {
	file := filepath.Join(t.TempDir(), File)
	l, err := Open(file, 0, 0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(file)
	held, release := hold(t)
	addHotset(l, 1)
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the writer did not start within 10s")
	}
	for i := 2; i <= 100; i++ {
		addHotset(l, i)
	}
	if after, _ := os.ReadFile(file); !bytes.Equal(after, before) {
		t.Fatalf("the file changed while the writer was held: %d bytes, were %d", len(after), len(before))
	}
	if v := l.View(); len(v.Entries) != 100 || v.Stats.Batches != 1 {
		t.Fatalf("while held: %d entries, %d batches; want 100, 1 (the journal written at Open)", len(v.Entries), v.Stats.Batches)
	}
	release()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2, err := Open(file, 0, 0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if v := l2.View(); len(v.Entries) != 100 || Outcomes(&v.Entries[99]) != "v2c trap 127.0.0.1:162: sent; v3 inform 192.0.2.7:162: acknowledged; master: taken by the master" {
		t.Fatalf("reopened: %d entries, last outcomes %q", len(v.Entries), Outcomes(&v.Entries[len(v.Entries)-1]))
	}
}

// Group commit: the changes of CommitDelay are written in one batch (one
// write, one fsync), not before, and not one per change.
func TestGroupCommit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		file := filepath.Join(t.TempDir(), File)
		l, err := Open(file, 0, 0, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		fi0, _ := os.Stat(file)
		for i := range 20 {
			addHotset(l, i)
		}
		time.Sleep(CommitDelay - time.Millisecond)
		synctest.Wait()
		fi1, _ := os.Stat(file)
		if v := l.View(); v.Stats.Batches != 1 || fi1.Size() != fi0.Size() {
			t.Fatalf("before CommitDelay: %d batches, %d bytes (were %d); want the first batch only, at Open", v.Stats.Batches, fi1.Size(), fi0.Size())
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		fi2, _ := os.Stat(file)
		v := l.View()
		if v.Stats.Batches != 2 || v.Stats.Written != uint64(fi2.Size()) {
			t.Fatalf("after CommitDelay: %d batches, %d bytes written, file %d bytes; want 2 batches, all of the file", v.Stats.Batches, v.Stats.Written, fi2.Size())
		}
		// 20 notifications with 4 outcome changes each: about their size.
		if n := fi2.Size() - fi1.Size(); n > 20*1024 {
			t.Errorf("20 notifications took %d bytes", n)
		}
	})
}

// Everything comes back after a reopen: entries with their VarBinds,
// time and outcomes, the next index (also when every entry aged out,
// and across the wrap of the index), and the limits drop what they must.
func TestReplay(t *testing.T) {
	file := filepath.Join(t.TempDir(), File)
	c := &clock{time.Unix(1700000000, 0)}
	l, err := Open(file, 50, time.Hour, c.now, nil)
	if err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	l.next = 1<<32 - 30 // wraps to 1 within the test
	l.mu.Unlock()
	for i := range 80 {
		addHotset(l, i)
		c.t = c.t.Add(time.Second)
	}
	l.Outcome(1<<32-30, "master", false, "not kept: ignored")
	l.Outcome(40, "master", false, "failed: not connected") // a later outcome of a kept entry
	if err := l.SetLimits(40, time.Hour); err != nil {
		t.Fatal(err)
	}
	want := l.View()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2, err := Open(file, 40, time.Hour, c.now, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := l2.View()
	if len(got.Entries) != 40 || got.Next != want.Next || got.Next != 51 || got.Entries[0].Index != 11 {
		t.Fatalf("reopened: %d entries from %d, next %d; want 40 from 11, next %d (51)", len(got.Entries), got.Entries[0].Index, got.Next, want.Next)
	}
	for i := range got.Entries {
		g, w := got.Entries[i], want.Entries[i]
		if !g.Restored || g.Index != w.Index || !g.Time.Equal(w.Time) || g.Uptime != w.Uptime || !g.OID.Equal(w.OID) ||
			!slices.EqualFunc(g.Vars, w.Vars, func(a, b Var) bool {
				return a.OID.Equal(b.OID) && a.Kind == b.Kind && a.Num == b.Num && bytes.Equal(a.Bytes, b.Bytes) && a.Obj.Equal(b.Obj)
			}) || !slices.Equal(g.Outcomes, w.Outcomes) {
			t.Fatalf("entry %d reopened as\n%+v\nwant\n%+v", w.Index, g, w)
		}
	}
	if o := Outcomes(&got.Entries[len(got.Entries)-11]); !strings.HasSuffix(o, "master: failed: not connected") {
		t.Errorf("entry 40's outcomes %q", o)
	}
	// Smaller limits at a reopen keep the newest.
	l2.Close()
	l3, err := Open(file, 5, time.Hour, c.now, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := l3.View(); len(v.Entries) != 5 || v.Entries[0].Index != 46 {
		t.Fatalf("reopened with 5: %d entries from %d", len(v.Entries), v.Entries[0].Index)
	}
	// All aged out: the index goes on after a reopen.
	c.t = c.t.Add(2 * time.Hour)
	l3.Expire()
	l3.Close()
	l4, err := Open(file, 5, time.Hour, c.now, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l4.Close()
	if v := l4.View(); len(v.Entries) != 0 || v.Next != 51 {
		t.Fatalf("all aged out, reopened: %d entries, next %d; want 0, 51", len(v.Entries), v.Next)
	}
}

// A crash during a batch leaves a torn tail: whatever byte the file ends
// at, Open keeps every complete record, cuts the rest off, and says how
// many bytes it dropped.
func TestTornTail(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, File)
	l, err := Open(file, 0, 0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		addHotset(l, i)
	}
	l.Close()
	whole, _ := os.ReadFile(file)
	l, err = Open(file, 0, 0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 5; i < 8; i++ {
		addHotset(l, i)
	}
	want := l.View().Entries
	l.Close()
	torn, _ := os.ReadFile(file)
	// The complete records' ends.
	var ends []int
	end := len(magic)
	if _, err := frames(torn, func(_ []byte, n int) error {
		end += n
		ends = append(ends, end)
		return nil
	}); err != nil || end != len(torn) {
		t.Fatalf("records end at %d of %d bytes: %v", end, len(torn), err)
	}
	var out syncBuf
	prev := 0
	for off := len(whole); off < len(torn); off++ {
		if err := os.WriteFile(file, torn[:off], 0o600); err != nil {
			t.Fatal(err)
		}
		out.mu.Lock()
		out.b.Reset()
		out.mu.Unlock()
		l, err := Open(file, 0, 0, nil, logTo(&out))
		if err != nil {
			t.Fatalf("cut at %d: %v", off, err)
		}
		good := ends[0]
		for _, e := range ends {
			if e <= off {
				good = e
			}
		}
		v := l.View()
		l.Close()
		if v.Stats.TornBytes != uint64(off-good) {
			t.Fatalf("cut at %d: dropped %d bytes, want %d", off, v.Stats.TornBytes, off-good)
		}
		// The torn tail is cut off; Open then appends whole records (a
		// reservation of indexes) only.
		after, _ := os.ReadFile(file)
		end, err := frames(after, func([]byte, int) error { return nil })
		if len(after) < good || !bytes.Equal(after[:good], torn[:good]) || err != nil || end != len(after) {
			t.Fatalf("cut at %d: the file after Open has %d bytes, %d of them whole records (%v); want the %d before the tail and whole records after", off, len(after), end, err, good)
		}
		if say := fmt.Sprintf("dropped_bytes=%d", off-good); off > good && !strings.Contains(out.String(), say) {
			t.Fatalf("cut at %d: the log does not say %s:\n%s", off, say, out.String())
		}
		if len(v.Entries) < 5 || len(v.Entries) < prev {
			t.Fatalf("cut at %d: %d entries kept, want at least 5 and %d", off, len(v.Entries), prev)
		}
		prev = len(v.Entries)
		for i, e := range v.Entries {
			w := want[i]
			if e.Index != w.Index || e.Vars[0].Value().Str != w.Vars[0].Value().Str || (i < 5 && Outcomes(&e) != Outcomes(&w)) {
				t.Fatalf("cut at %d: entry %d is %d %q %q, want %d %q %q", off, i, e.Index, e.Vars[0].Bytes, Outcomes(&e), w.Index, w.Vars[0].Bytes, Outcomes(&w))
			}
		}
	}
	if prev != 8 {
		t.Errorf("cut before the last byte: %d entries, want 8", prev)
	}
	// A corrupt record (one bit) ends what is read: what follows is cut.
	bad := bytes.Clone(torn)
	bad[len(whole)+frameHeader] ^= 1 // the first payload byte of the batch
	os.WriteFile(file, bad, 0o600)
	l, err = Open(file, 0, 0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if v := l.View(); len(v.Entries) != 5 || v.Stats.TornBytes != uint64(len(torn)-len(whole)) {
		t.Errorf("corrupt record: %d entries, %d bytes dropped; want 5, %d", len(v.Entries), v.Stats.TornBytes, len(torn)-len(whole))
	}
}

// The log of an earlier version (LegacyFile) is read once and becomes
// the journal.
func TestLegacyConverted(t *testing.T) {
	dir := t.TempDir()
	legacy := filepath.Join(dir, LegacyFile)
	os.WriteFile(legacy, []byte(`{"next":8,"entries":[{"index":6,"time":"2026-11-01T10:00:00Z","oid":[1,3,6,1,4,1,32473,1,0,21],`+
		`"vars":[{"oid":[1,3,6,1,4,1,32473,1,14,0,1,0],"kind":5,"bytes":"cHVtcHM="}],"outcomes":[{"path":"master","result":"sent","ok":true}]},`+
		`{"index":7,"time":"2026-11-01T10:00:01Z","oid":[1,3,6,1,4,1,32473,1,0,21],"vars":[]}]}`), 0o600)
	os.WriteFile(filepath.Join(dir, "."+LegacyFile+".tmp-0123456789abcdef"), []byte("{"), 0o600)
	c := &clock{time.Date(2026, 11, 1, 11, 0, 0, 0, time.UTC)}
	for range 2 {
		l, err := Open(filepath.Join(dir, File), 0, 0, c.now, nil)
		if err != nil {
			t.Fatal(err)
		}
		v := l.View()
		l.Close()
		if len(v.Entries) != 2 || v.Next != 8 || v.Entries[0].Vars[0].Value().Str != "pumps" || Outcomes(&v.Entries[0]) != "master: sent" {
			t.Fatalf("converted: %+v", v)
		}
		des, _ := os.ReadDir(dir)
		if len(des) != 1 || des[0].Name() != File {
			t.Fatalf("the directory holds %v, want %s alone", des, File)
		}
	}
}

// A save that fails logs one line per kind of error, naming no
// temporary file, however many writes fail; SaveErr says it; a success
// is said once.
func TestSaveErrorFolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "state")
		os.Mkdir(dir, 0o700)
		var out syncBuf
		l, err := Open(filepath.Join(dir, File), 0, 0, nil, logTo(&out))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		os.RemoveAll(dir) // every compaction fails
		for i := range 30 {
			l.mu.Lock()
			l.j.snap = true
			l.mu.Unlock()
			addHotset(l, i)
			time.Sleep(CommitDelay)
			synctest.Wait()
		}
		lines := strings.Count(out.String(), "notification log not saved")
		if v := l.View(); lines != 1 || strings.Contains(out.String(), ".tmp-") || !strings.Contains(v.Stats.SaveErr, "no such file or directory") || strings.Contains(v.Stats.SaveErr, ".tmp-") {
			t.Fatalf("30 failed saves logged %d lines, SaveErr %q:\n%s", lines, v.Stats.SaveErr, out.String())
		}
		os.Mkdir(dir, 0o700)
		time.Sleep(retryDelay + CommitDelay)
		synctest.Wait()
		if v := l.View(); v.Stats.SaveErr != "" || strings.Count(out.String(), "notification log saved again") != 1 {
			t.Fatalf("after the directory is back: SaveErr %q\n%s", v.Stats.SaveErr, out.String())
		}
		if l2, err := Open(filepath.Join(dir, File), 0, 0, nil, nil); err != nil || len(l2.View().Entries) != 30 {
			t.Fatalf("reopened: %v", err)
		} else {
			l2.Close()
		}
	})
}

// The biggest entry Add keeps fits in a record Open reads back, and
// decodes as it was; a damaged payload is an error, never a panic.
func TestRecordBounds(t *testing.T) {
	long := make(asn1tree.OID, 300)
	for i := range long {
		long[i] = 1<<32 - 1
	}
	vals, oids := make([]asn1tree.Value, MaxVars+3), make([]asn1tree.OID, MaxVars+3)
	for i := range vals {
		vals[i] = asn1tree.Value{Kind: asn1tree.ObjectIdentifier, Str: strings.Repeat("x", 1000), OID: long}
		oids[i] = long
	}
	l, _ := Open("", 0, 0, nil, nil)
	idx := l.Add(time.Hour, long, vals, oids)
	for i := range MaxOutcomes + 2 {
		l.Outcome(idx, fmt.Sprint(i, strings.Repeat("p", 1000)), true, strings.Repeat("r", 1000))
	}
	e := l.View().Entries[0]
	b := appendFrame(nil, &record{kind: recAdd, e: e})
	if n := len(b) - frameHeader; n > maxRecord {
		t.Fatalf("the biggest entry takes %d bytes, more than a record may (%d)", n, maxRecord)
	}
	r, err := decode(b[frameHeader:])
	if err != nil || r.e.Index != idx || len(r.e.Vars) != MaxVars || r.e.Omitted != 3 || len(r.e.Outcomes) != MaxOutcomes ||
		len(r.e.Vars[0].OID) != maxOIDLen || len(r.e.Vars[0].Bytes) != maxValueBytes || len(r.e.Outcomes[0].Result) != maxValueBytes {
		t.Fatalf("decoded: %v, %d vars, %d omitted, %d outcomes", err, len(r.e.Vars), r.e.Omitted, len(r.e.Outcomes))
	}
	// Every cut and some flips of an ordinary entry.
	small, _ := Open("", 0, 0, nil, nil)
	addHotset(small, 1)
	e = small.View().Entries[0]
	p := appendFrame(nil, &record{kind: recAdd, e: e})[frameHeader:]
	for n := range len(p) {
		if _, err := decode(p[:n]); err == nil {
			t.Fatalf("a payload cut at %d of %d decodes", n, len(p))
		}
	}
	for i := range len(p) {
		q := bytes.Clone(p)
		q[i] ^= 0xff
		decode(q) // must not panic
	}
}

// Many goroutines adding and recording outcomes while the writer appends,
// compacts and falls behind (small bounds): what a reopen reads is what
// the log held.
func TestConcurrentChangesReopenAsKept(t *testing.T) {
	oldFloor, oldPending, oldDelay := compactFloor, maxPending, commitDelay
	compactFloor, maxPending, commitDelay = 4<<10, 64, time.Millisecond
	t.Cleanup(func() { compactFloor, maxPending, commitDelay = oldFloor, oldPending, oldDelay })
	file := filepath.Join(t.TempDir(), File)
	l, err := Open(file, 300, 0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 300 {
				addHotset(l, g*1000+i)
				if i%50 == 0 {
					l.View()
					l.Expire()
				}
			}
		})
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	want := l.View()
	if want.Stats.Compactions < 2 || want.Stats.Overflows == 0 {
		t.Errorf("%d compactions, %d overflows: the bounds were not reached", want.Stats.Compactions, want.Stats.Overflows)
	}
	l2, err := Open(file, 300, 0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	got := l2.View()
	if len(got.Entries) != len(want.Entries) || got.Next != want.Next {
		t.Fatalf("reopened %d entries, next %d; the log held %d, next %d", len(got.Entries), got.Next, len(want.Entries), want.Next)
	}
	for i := range got.Entries {
		g, w := &got.Entries[i], &want.Entries[i]
		if g.Index != w.Index || Outcomes(g) != Outcomes(w) || g.Vars[4].Value().Str != w.Vars[4].Value().Str {
			t.Fatalf("entry %d reopened as %d %q, the log held %d %q", i, g.Index, Outcomes(g), w.Index, Outcomes(w))
		}
	}
}

// An index handed out in a batch a crash lost is never handed out again
// (a manager may have read it); after Close the next start goes on at
// the next index, skipping none.
func TestIndexesLostInACrashAreNotReused(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, File)
	l, err := Open(file, 0, 0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		addHotset(l, i)
	}
	l.Close() // clean: the next start goes on at 4
	if l, err = Open(file, 0, 0, nil, nil); err != nil {
		t.Fatal(err)
	}
	if n := l.View().Next; n != 4 {
		t.Fatalf("after a clean stop the next index is %d, want 4", n)
	}
	batches := l.View().Stats.Batches
	addHotset(l, 3) // 4, written in its batch
	waitWritten(t, l, batches+1)
	held, release := hold(t)
	lost := addHotset(l, 4) // 5: handed out, its batch never written
	<-held
	crashed, err := os.ReadFile(file) // the disk as a crash leaves it
	if err != nil {
		t.Fatal(err)
	}
	release()
	l.Close()
	copyFile := filepath.Join(t.TempDir(), File)
	if err := os.WriteFile(copyFile, crashed, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Open(copyFile, 0, 0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	v := r.View()
	if len(v.Entries) != 4 || cmpIndex(v.Next, lost) <= 0 {
		t.Fatalf("after the crash: %d entries, next %d; want 4 entries and a next index after %d, which was handed out", len(v.Entries), v.Next, lost)
	}
}

// waitWritten waits until the writer has written n batches.
func waitWritten(t *testing.T, l *Log, n uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for l.View().Stats.Batches < n {
		if time.Now().After(deadline) {
			t.Fatalf("the writer wrote %d batches in 10s, want %d", l.View().Stats.Batches, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// Load writes nothing, whatever the directory holds (no journal yet, a
// torn tail, an old format with a temporary file): a daemon whose start
// is refused after it leaves every file as it was. Start then writes what
// Open would have; a Log never started closes at once.
func TestLoadWritesNothingUntilStart(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, File)
	state := func() map[string]string {
		m := map[string]string{}
		des, _ := os.ReadDir(dir)
		for _, de := range des {
			b, _ := os.ReadFile(filepath.Join(dir, de.Name()))
			m[de.Name()] = string(b)
		}
		return m
	}
	load := func(what string) *Log {
		t.Helper()
		before := state()
		l, err := Load(file, 0, 0, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		addHotset(l, 9) // waits in memory
		if now := state(); !maps.Equal(before, now) {
			t.Fatalf("%s: Load changed the directory: %v, was %v", what, slices.Sorted(maps.Keys(now)), slices.Sorted(maps.Keys(before)))
		}
		return l
	}
	l := load("no journal")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = load("no journal, again")
	l.Start()
	l.Close()
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("Start wrote no journal: %v", err)
	}
	whole, _ := os.ReadFile(file)
	os.WriteFile(file, append(slices.Clone(whole), 0x7f, 0x01), 0o600) // a torn tail
	os.WriteFile(filepath.Join(dir, LegacyFile), []byte(`{"next":1,"entries":[]}`), 0o600)
	os.WriteFile(filepath.Join(dir, "."+File+".tmp-0123456789abcdef"), []byte("x"), 0o600)
	l = load("torn tail, legacy and temporary files")
	l.Start()
	if v := l.View(); len(v.Entries) != 2 || v.Stats.TornBytes != 2 {
		t.Errorf("after Start: %d entries, %d torn bytes; want 2 and 2", len(v.Entries), v.Stats.TornBytes)
	}
	l.Close()
	if des, _ := os.ReadDir(dir); len(des) != 1 || des[0].Name() != File {
		t.Errorf("after Start the directory holds %v, want %s alone", des, File)
	}
}
