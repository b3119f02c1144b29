package settable

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfagent/subagent/agentx"
	"github.com/perfagent/subagent/asn1tree"
)

// slowRows is rows whose Put waits for release (a save to disk), safe
// for the reader that runs meanwhile.
type slowRows struct {
	mu      sync.Mutex
	rows    rows
	putting chan struct{}
	release chan struct{}
}

func (s *slowRows) Rows() []Row {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rows.Rows()
}
func (s *slowRows) Check(old *Row, r *Row) error { return s.rows.Check(old, r) }
func (s *slowRows) Put(r *Row) error {
	s.putting <- struct{}{}
	<-s.release
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rows.Put(r)
}
func (s *slowRows) Remove(n string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rows.Remove(n)
}

// A reader of the tables (every SNMP request joins their view) is not
// held up while a Set's change is being saved, and never sees a row
// twice: it sees the row once it is saved.
func TestReadsDoNotWaitForACommit(t *testing.T) {
	tb, src := testTable()
	slow := &slowRows{rows: *src, putting: make(chan struct{}), release: make(chan struct{})}
	tb.Src = slow
	w := NewWriter(nil, tb)
	ch, serr := w.TestSet([]agentx.VarBind{cell(tb, colStat, "hot", asn1tree.Str("Disk/*/qlen")), cell(tb, colStatus, "hot", asn1tree.Int(CreateAndGo))})
	if serr != nil {
		t.Fatal(serr)
	}
	done := make(chan error, 1)
	go func() { done <- ch.Commit() }()
	<-slow.putting // the commit is saving the row

	read := make(chan bool, 1)
	go func() {
		_, ok := w.View().Get(tb.IndexOID(colStat, "hot"))
		read <- ok
	}()
	select {
	case ok := <-read:
		if ok {
			t.Error("the row is served before it was saved")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a read of the tables waited for the commit's save")
	}
	close(slow.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, ok := w.View().Get(tb.IndexOID(colStat, "hot")); !ok {
		t.Error("the row is not served once saved")
	}
}

// blockingRows is rows whose Rows blocks, once armed, until released.
type blockingRows struct {
	*rows
	armed   atomic.Bool
	listing chan struct{}
	release chan struct{}
}

func (b *blockingRows) Rows() []Row {
	if b.armed.CompareAndSwap(true, false) {
		close(b.listing)
		<-b.release
	}
	return b.rows.Rows()
}

// A reader is not held up while a view of the rows near its viewTTL is
// rebuilt (thousands of configured rows): it is served the current one,
// and the rebuilt one once done, with a row changed outside SNMP
// meanwhile.
func TestReadsDoNotWaitForARebuild(t *testing.T) {
	tb, src := testTable()
	slow := &blockingRows{rows: src, listing: make(chan struct{}), release: make(chan struct{})}
	tb.Src = slow
	w := NewWriter(nil, tb)
	conf := tb.IndexOID(colStat, "conf")
	if _, ok := w.View().Get(conf); !ok {
		t.Fatal("the configured row is not served")
	}
	src.m["reloaded"] = Row{Name: "reloaded", Vals: src.m["conf"].Vals, Status: Active, Storage: ReadOnly}
	slow.armed.Store(true)
	at := w.built.Add(viewTTL * 7 / 8) // due for a rebuild, not expired
	w.mu.Lock()
	w.now = func() time.Time { return at }
	w.mu.Unlock()
	read := make(chan bool, 1)
	go func() {
		_, ok := w.View().Get(conf)
		read <- ok
	}()
	select {
	case ok := <-read:
		if !ok {
			t.Error("the current view is not served during the rebuild")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a read of the tables waited for the rebuild of a view due")
	}
	<-slow.listing // the rebuild is under way
	close(slow.release)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, ok := w.View().Get(tb.IndexOID(colStat, "reloaded")); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the rebuilt view was not served within 10 s")
		}
		runtime.Gosched()
	}
}
