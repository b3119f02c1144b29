package agentx

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/foldlog"
)

// memWriter is a Writer over a map of integers under testBase: an
// Integer32 at b("3.N") sets cell N; values above 100 are wrongValue,
// other types wrongType, N above 9 noCreation. failCommit makes the next
// Commit fail half-way (after applying its first VarBind).
type memWriter struct {
	mu         sync.Mutex
	cells      map[uint32]int64
	failCommit bool
	calls      []string
}

func (w *memWriter) note(s string) { w.mu.Lock(); w.calls = append(w.calls, s); w.mu.Unlock() }

func (w *memWriter) TestSet(vbs []VarBind) (Change, *SetError) {
	w.note("test")
	col := b("3")
	ch := &memChange{w: w}
	for i, vb := range vbs {
		if !vb.OID.HasPrefix(col) || len(vb.OID) != len(col)+1 {
			return nil, Refuse(NotWritable, i+1, "%s is not a cell", vb.OID)
		}
		n := vb.OID[len(col)]
		switch {
		case vb.Value.Kind != asn1tree.Integer32:
			return nil, Refuse(WrongType, i+1, "%s is %s, want Integer32", vb.OID, vb.Value.Kind)
		case n > 9:
			return nil, Refuse(NoCreation, i+1, "no cell %d", n)
		case vb.Value.Signed() > 100:
			return nil, Refuse(WrongValue, i+1, "%d above 100", vb.Value.Signed())
		}
		ch.sets = append(ch.sets, [2]int64{int64(n), vb.Value.Signed()})
	}
	return ch, nil
}

type memChange struct {
	w    *memWriter
	sets [][2]int64
	old  map[uint32]*int64
}

func (c *memChange) Commit() error {
	c.w.note("commit")
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	c.old = map[uint32]*int64{}
	for i, s := range c.sets {
		n := uint32(s[0])
		if _, seen := c.old[n]; !seen {
			if v, ok := c.w.cells[n]; ok {
				c.old[n] = &v
			} else {
				c.old[n] = nil
			}
		}
		if c.w.failCommit && i == 1 {
			c.w.failCommit = false
			return errors.New("disk full")
		}
		c.w.cells[n] = s[1]
	}
	return nil
}

func (c *memChange) Undo() error {
	c.w.note("undo")
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	for n, v := range c.old {
		if v == nil {
			delete(c.w.cells, n)
		} else {
			c.w.cells[n] = *v
		}
	}
	return nil
}

func (c *memChange) Cleanup() { c.w.note("cleanup") }

func (w *memWriter) state() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var s []string
	for n := uint32(0); n < 10; n++ {
		if v, ok := w.cells[n]; ok {
			s = append(s, fmt.Sprintf("%d=%d", n, v))
		}
	}
	return strings.Join(s, " ")
}

func (w *memWriter) trace() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := strings.Join(w.calls, ",")
	w.calls = nil
	return s
}

// The Set phases over the fake master: test then commit then cleanup
// applies everything; one bad VarBind among five changes nothing and is
// named by its index; a failed commit is undone; a resent CommitSet is
// answered again without committing twice.
func TestSetPhases(t *testing.T) {
	m := newFakeMaster(t)
	w := &memWriter{cells: map[uint32]int64{1: 10}}
	cfg := testConfig(m.addr)
	cfg.Writer = w
	start(t, cfg)
	c := m.accept()
	c.handshake(cfg)
	cell := func(n uint32, v int32) varbind {
		return varbind{typ: vbInteger, name: b(fmt.Sprintf("3.%d", n)), num: uint64(uint32(v))}
	}
	tid := uint32(100)
	phase := func(typ pduType, vbs ...varbind) *packet {
		return c.ask(&packet{header: header{typ: typ, flags: flagNetworkByteOrder, transactionID: tid}, varbinds: vbs})
	}
	cleanup := func() {
		c.packetID++
		c.send(&packet{header: header{typ: typeCleanupSet, flags: flagNetworkByteOrder, sessionID: c.sessionID,
			transactionID: tid, packetID: c.packetID}})
	}

	// All good: applied once committed, and only then.
	if r := phase(typeTestSet, cell(1, 11), cell(2, 22)); r.resError != NoError {
		t.Fatalf("TestSet answered %s index %d", r.resError, r.resIndex)
	}
	if got := w.state(); got != "1=10" {
		t.Errorf("TestSet changed the cells: %s", got)
	}
	if r := phase(typeCommitSet); r.resError != NoError {
		t.Fatalf("CommitSet answered %s", r.resError)
	}
	cleanup()
	if r := c.ask(&packet{header: header{typ: typePing, flags: flagNetworkByteOrder}}); r.resError != NoError {
		t.Fatal(r.resError)
	}
	if got, tr := w.state(), w.trace(); got != "1=11 2=22" || tr != "test,commit,cleanup" {
		t.Errorf("after commit: cells %s, calls %s", got, tr)
	}

	// Each refusal with its code and the index of the bad VarBind; nothing changes.
	bad := []struct {
		vb   varbind
		code ErrorCode
	}{
		{cell(3, 101), WrongValue},
		{varbind{typ: vbOctetString, name: b("3.3"), str: "x"}, WrongType},
		{cell(12, 1), NoCreation},
		{varbind{typ: vbInteger, name: b("4.0")}, NotWritable},
		{varbind{typ: vbInteger, name: asn1tree.MustParse("1.3.6.1.4.1.32473.9.1")}, NotWritable}, // outside the registration
	}
	for _, bc := range bad {
		tid++
		vbs := []varbind{cell(1, 1), cell(2, 2), cell(4, 4), bc.vb, cell(5, 5)}
		r := phase(typeTestSet, vbs...)
		if r.resError != bc.code || r.resIndex != 4 {
			t.Errorf("bad %s: TestSet answered %s index %d, want %s index 4", bc.vb.name, r.resError, r.resIndex, bc.code)
		}
		cleanup()
	}
	c.ask(&packet{header: header{typ: typePing, flags: flagNetworkByteOrder}})
	if got := w.state(); got != "1=11 2=22" {
		t.Errorf("refused sets changed the cells: %s", got)
	}
	w.trace()

	// A commit that fails half-way is undone (the master sends no CleanupSet
	// after UndoSet: the session cleans up itself).
	tid++
	w.mu.Lock()
	w.failCommit = true
	w.mu.Unlock()
	if r := phase(typeTestSet, cell(1, 50), cell(6, 60)); r.resError != NoError {
		t.Fatal(r.resError)
	}
	if r := phase(typeCommitSet); r.resError != CommitFailed {
		t.Errorf("failing commit answered %s", r.resError)
	}
	if r := phase(typeUndoSet); r.resError != NoError {
		t.Errorf("UndoSet answered %s", r.resError)
	}
	if got, tr := w.state(), w.trace(); got != "1=11 2=22" || tr != "test,commit,undo,cleanup" {
		t.Errorf("after undo: cells %s, calls %s", got, tr)
	}

	// Another subagent's commit failed: ours, done, is undone too.
	tid++
	phase(typeTestSet, cell(7, 7))
	phase(typeCommitSet)
	if r := phase(typeUndoSet); r.resError != NoError || w.state() != "1=11 2=22" {
		t.Errorf("undo of a good commit: %s, cells %s", r.resError, w.state())
	}
	w.trace()

	// A resent CommitSet (same packetID) gets the same answer, committed once.
	tid++
	phase(typeTestSet, cell(8, 8))
	c.packetID++
	commit := &packet{header: header{typ: typeCommitSet, flags: flagNetworkByteOrder, transactionID: tid, packetID: c.packetID}}
	for i := 0; i < 2; i++ {
		if r := c.ask(commit); r.resError != NoError {
			t.Errorf("CommitSet %d answered %s", i, r.resError)
		}
	}
	cleanup()
	c.ask(&packet{header: header{typ: typePing, flags: flagNetworkByteOrder}})
	if tr := w.trace(); tr != "test,commit,cleanup" {
		t.Errorf("resent commit: calls %s", tr)
	}
	// A CommitSet without a TestSet of ours fails.
	tid++
	if r := phase(typeCommitSet); r.resError != CommitFailed {
		t.Errorf("CommitSet without TestSet answered %s", r.resError)
	}
}

// A session that ends between CommitSet and CleanupSet still cleans up.
func TestSetCleanedUpWhenSessionEnds(t *testing.T) {
	m := newFakeMaster(t)
	w := &memWriter{cells: map[uint32]int64{}}
	cfg := testConfig(m.addr)
	cfg.Writer = w
	r := start(t, cfg)
	c := m.accept()
	c.handshake(cfg)
	c.ask(&packet{header: header{typ: typeTestSet, flags: flagNetworkByteOrder, transactionID: 5},
		varbinds: []varbind{{typ: vbInteger, name: b("3.1"), num: 1}}})
	c.ask(&packet{header: header{typ: typeCommitSet, flags: flagNetworkByteOrder, transactionID: 5}})
	r.stop(t)
	if tr := w.trace(); tr != "test,commit,cleanup" {
		t.Errorf("calls %s", tr)
	}
	if w.state() != "1=1" {
		t.Errorf("cells %s", w.state())
	}
}

// 10,000 refused SETs, 100 a second of the test's clock, for three
// reasons, log a few lines per reason; the counts of the lines add up to
// every refusal once a minute has passed and each reason came again.
func TestRefusedSetsLogFolded(t *testing.T) {
	lb := &testutil.Buffer{}
	fl := foldlog.New(slog.New(slog.NewTextHandler(lb, nil)), slog.LevelInfo)
	now := time.Unix(1000, 0)
	fl.Now = func() time.Time { return now }
	r := &responder{scope: subtreeScope(testSubtrees...), writer: &memWriter{cells: map[uint32]int64{}}, setLog: fl}
	bad := []varbind{
		{typ: vbInteger, name: b("3.1"), num: 101},     // wrongValue
		{typ: vbOctetString, name: b("3.1"), str: "x"}, // wrongType
		{typ: vbInteger, name: b("3.12"), num: 1},      // noCreation
	}
	tid := uint32(0)
	refuse := func(vb varbind) {
		tid++
		var resp packet
		r.set(&packet{header: header{typ: typeTestSet, transactionID: tid}, varbinds: []varbind{vb}}, &resp)
		if resp.resError == NoError {
			t.Fatalf("%s accepted", vb.name)
		}
		r.set(&packet{header: header{typ: typeCleanupSet, transactionID: tid}}, &resp)
	}
	const n = 10000
	for i := range n {
		refuse(bad[i%len(bad)])
		now = now.Add(10 * time.Millisecond)
	}
	now = now.Add(time.Minute)
	for _, vb := range bad {
		refuse(vb)
	}
	out := lb.String()
	lines := strings.Count(out, "agentx: TestSet refused")
	if lines == 0 || lines >= 100 {
		t.Fatalf("%d refused SETs logged %d lines, want 1 to 99:\n%s", n+len(bad), lines, testutil.Tail(out, 5))
	}
	total := 0
	for _, m := range regexp.MustCompile(`count=(\d+)`).FindAllStringSubmatch(out, -1) {
		k, _ := strconv.Atoi(m[1])
		total += k
	}
	if total != n+len(bad) {
		t.Errorf("the lines count %d refusals, want %d:\n%s", total, n+len(bad), out)
	}
	for _, code := range []ErrorCode{WrongValue, WrongType, NoCreation} {
		if !strings.Contains(out, "reason="+code.String()+" ") {
			t.Errorf("no line for %s:\n%s", code, out)
		}
	}
	t.Logf("%d refused SETs in %v: %d lines", n+len(bad), time.Duration(n)*10*time.Millisecond+time.Minute, lines)
}
