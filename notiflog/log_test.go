package notiflog

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/trustdir"
	"github.com/perfagent/subagent/spmi"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

var trapOID = asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1, 0, 21}

func add(l *Log, name string) uint32 {
	return l.Add(3*time.Second, trapOID,
		[]asn1tree.Value{asn1tree.Str(name), asn1tree.Int(-5)},
		[]asn1tree.OID{{1, 3, 6, 1, 4, 1, 32473, 1, 14, 0, 1, 0}, {1, 3, 6, 1, 4, 1, 32473, 1, 14, 0, 3, 0}})
}

// Indexes never go backwards across a reopen; restored entries keep their
// VarBinds and time, serve an uptime of 0, and the limits drop the oldest.
func TestLogPersistsAndBounds(t *testing.T) {
	file := filepath.Join(t.TempDir(), File)
	c := &clock{time.Unix(1700000000, 0)}
	l, err := Open(file, 3, time.Hour, c.now, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"a", "b", "c", "d"} {
		if idx := add(l, name); idx != uint32(i+1) {
			t.Fatalf("entry %s got index %d, want %d", name, idx, i+1)
		}
	}
	l.Outcome(4, "v2c inform 127.0.0.1:162", false, Pending)
	l.Outcome(4, "v2c inform 127.0.0.1:162", true, "acknowledged")
	l.Outcome(4, "master", false, "failed: not connected")
	v := l.View()
	if len(v.Entries) != 3 || v.Entries[0].Index != 2 || v.Stats.Evicted != 1 {
		t.Fatalf("kept %d entries from %d, evicted %d; want 3 from 2, 1", len(v.Entries), v.Entries[0].Index, v.Stats.Evicted)
	}
	if got := Outcomes(&v.Entries[2]); got != "v2c inform 127.0.0.1:162: acknowledged; master: failed: not connected" {
		t.Errorf("outcomes %q", got)
	}

	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	c.t = c.t.Add(30 * time.Minute)
	l2, err := Open(file, 3, time.Hour, c.now, nil)
	if err != nil {
		t.Fatal(err)
	}
	if idx := add(l2, "e"); idx != 5 {
		t.Errorf("first index after the reopen %d, want 5", idx)
	}
	v = l2.View()
	if len(v.Entries) != 3 || !v.Entries[0].Restored || v.Entries[2].Restored || v.Entries[0].Vars[0].Value().Str != "c" {
		t.Fatalf("after reopen: %+v", v.Entries)
	}
	// Age: the restored entries are 30 minutes old; past the hour they go.
	c.t = c.t.Add(45 * time.Minute)
	l2.Expire()
	if v = l2.View(); len(v.Entries) != 1 || v.Entries[0].Index != 5 || v.Stats.AgedOut != 2 {
		t.Errorf("after aging: %d entries, first %d, aged out %d", len(v.Entries), v.Entries[0].Index, v.Stats.AgedOut)
	}
	// All aged out and reopened: the index still goes on.
	c.t = c.t.Add(2 * time.Hour)
	l2.Expire()
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
	l3, err := Open(file, 3, time.Hour, c.now, nil)
	if err != nil {
		t.Fatal(err)
	}
	if idx := add(l3, "f"); idx != 6 {
		t.Errorf("index after all aged out and a reopen: %d, want 6", idx)
	}
	l3.Close()
}

func TestLogRefusesBadFileAndLimits(t *testing.T) {
	dir := t.TempDir()
	file, legacy := filepath.Join(dir, File), filepath.Join(dir, LegacyFile)
	os.WriteFile(legacy, []byte(`{"next":3,"entries":[{"index":2},{"index":1}]}`), 0o600)
	if _, err := Open(file, 0, 0, nil, nil); err == nil || !strings.Contains(err.Error(), legacy+": entry 2 has index 1") {
		t.Errorf("entries out of order: %v", err)
	}
	os.WriteFile(legacy, []byte(`not json`), 0o600)
	if _, err := Open(file, 0, 0, nil, nil); err == nil || !strings.Contains(err.Error(), legacy+": not a saved log") {
		t.Errorf("garbage: %v", err)
	}
	// A journal whose head is not a journal's is named, and kept as it is.
	os.WriteFile(file, []byte(`{"next":3,"entries":[]}`), 0o600)
	if _, err := Open(file, 0, 0, nil, nil); err == nil || !strings.Contains(err.Error(), file+": not a notification journal") {
		t.Errorf("not a journal: %v", err)
	}
	if b, _ := os.ReadFile(file); string(b) != `{"next":3,"entries":[]}` {
		t.Errorf("a file that is not a journal was changed to %q", b)
	}
	if err := CheckLimits(MaxEntries+1, 0); err == nil || !strings.HasPrefix(err.Error(), "entries:") {
		t.Errorf("too many entries: %v", err)
	}
	if err := CheckLimits(10, time.Second); err == nil || !strings.HasPrefix(err.Error(), "max_age:") {
		t.Errorf("too short an age: %v", err)
	}
}

// The provider serves each entry and its VarBinds as rows.
func TestProviderServesEntriesAndVars(t *testing.T) {
	l, err := Open("", 0, 0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	add(l, "pumps")
	l.Outcome(1, "master", true, "sent")
	b := spmi.NewBuilder(asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1}, nil, time.Now())
	if err := (Provider{L: l}).Collect(b); err != nil {
		t.Fatal(err)
	}
	snap := b.Finish()
	ans := snap.Answer()
	for path, want := range map[string]string{
		"NotifLog/entries":             "1",
		"NotifLog/entry/1/oid":         trapOID.String(),
		"NotifLog/entry/1/delivered":   "1",
		"NotifLog/entry/1/var/1/value": "pumps",
		"NotifLog/entry/1/var/2/value": "-5",
		"NotifLog/entry/1/var/2/type":  "Integer32",
		"NotifLog/entry/1/var/1/oid":   "1.3.6.1.4.1.32473.1.14.0.1.0",
	} {
		n, err := snap.Lookup(path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if got := ans.Value(n).String(); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
}

// NotifLog/entry serves the newest TextRows entries alone, while
// NotifLog/entries counts all of them.
func TestProviderServesTheNewestEntries(t *testing.T) {
	l, err := Open("", 0, 0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = TextRows + 50
	for range n {
		add(l, "pumps")
	}
	b := spmi.NewBuilder(asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1}, nil, time.Now())
	if err := (Provider{L: l}).Collect(b); err != nil {
		t.Fatal(err)
	}
	snap := b.Finish()
	if node, err := snap.Lookup("NotifLog/entries"); err != nil || snap.Answer().Value(node).String() != strconv.Itoa(n) {
		t.Errorf("NotifLog/entries: %v, want %d", err, n)
	}
	for idx, want := range map[int]bool{1: false, n - TextRows: false, n - TextRows + 1: true, n: true} {
		_, err := snap.Lookup(fmt.Sprintf("NotifLog/entry/%d/oid", idx))
		if (err == nil) != want {
			t.Errorf("entry %d of %d served: %v, want %v", idx, n, err == nil, want)
		}
	}
}

// A view is read without the log's lock (the provider serves it while
// trap workers record outcomes and new entries push old ones out): what
// it holds must not change under the reader.
func TestViewUnchangedByLaterWrites(t *testing.T) {
	l, err := Open("", 3, 0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "c"} {
		add(l, name)
	}
	l.Outcome(3, "master", false, "failed: not connected")
	v := l.View()
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.Outcome(3, "master", true, "taken by the master")
		add(l, "d") // evicts "a": the others move down
	}()
	<-done
	if got := v.Entries[0].Vars[0].Value().Str; got != "a" {
		t.Errorf("view's first entry now %q, want a", got)
	}
	if got := Outcomes(&v.Entries[2]); got != "master: failed: not connected" {
		t.Errorf("view's outcome now %q", got)
	}
}

// The file never grows past what Open reads back (trustdir.MaxFileSize):
// big notifications in a long log push the oldest out, rather than make
// the next start fail.
func TestSaveKeepsTheFileReadable(t *testing.T) {
	file := filepath.Join(t.TempDir(), File)
	l, err := Open(file, MaxEntries, 0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	vals, oids := make([]asn1tree.Value, MaxVars), make([]asn1tree.OID, MaxVars)
	for i := range vals {
		vals[i] = asn1tree.Str(strings.Repeat("\xff", maxValueBytes))
		oids[i] = asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1, 14, 0, uint32(i), 0}
	}
	const n = 1000 // about 20 kB each
	for range n {
		l.Add(time.Second, trapOID, vals, oids)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("save: %v", err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Size() > trustdir.MaxFileSize {
		t.Fatalf("journal: %v, %d bytes", err, fi.Size())
	}
	l2, err := Open(file, MaxEntries, 0, nil, nil)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer l2.Close()
	v, v2 := l.View(), l2.View()
	if len(v2.Entries) == 0 || len(v2.Entries) == n || v2.Entries[len(v2.Entries)-1].Index != n {
		t.Fatalf("reopened with %d entries, last %d; want some but not all %d, the newest last", len(v2.Entries), v2.Entries[len(v2.Entries)-1].Index, n)
	}
	if len(v.Entries) != len(v2.Entries) || v.Stats.Evicted != uint64(n-len(v.Entries)) {
		t.Errorf("log keeps %d entries, evicted %d; the file %d", len(v.Entries), v.Stats.Evicted, len(v2.Entries))
	}
}
