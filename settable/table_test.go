package settable

import (
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/perfagent/subagent/agentx"
	"github.com/perfagent/subagent/asn1tree"
)

// rows is a Source of rows in memory; full makes Check refuse with ErrFull.
type rows struct {
	m    map[string]Row
	full bool
}

func (s *rows) Rows() []Row {
	out := make([]Row, 0, len(s.m))
	for _, r := range s.m {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (s *rows) Check(_ *Row, r *Row) error {
	switch {
	case s.full:
		return fmt.Errorf("no room: %w", ErrFull)
	case r.Vals[0].Str == "nope/x":
		return errors.New("nope/x matches nothing")
	}
	return nil
}

func (s *rows) Put(r *Row) error      { s.m[r.Name] = *r.clone(); return nil }
func (s *rows) Remove(n string) error { delete(s.m, n); return nil }

var eighty = asn1tree.Int(80)

// testTable has a required text column, an integer with a default and a
// read-only number; "conf" is a row of the configuration (readOnly).
func testTable() (*Table, *rows) {
	src := &rows{m: map[string]Row{"conf": {Name: "conf", Vals: []asn1tree.Value{asn1tree.Str("Disk/*/busy"), eighty, asn1tree.Gauge(1)}, Status: Active, Storage: ReadOnly}}}
	t := &Table{
		Name:  "testTable",
		Entry: asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1, 110, 9, 1},
		Cols: []Col{
			{Name: "stat", Kind: asn1tree.OctetString, Min: 5, Max: 255},
			{Name: "threshold", Kind: asn1tree.Integer32, Min: 0, Max: 100, Default: &eighty},
			{Name: "number", Kind: asn1tree.Gauge32, ReadOnly: true},
		},
		CheckKey: func(name string) error {
			if name == "" || len(name) > 31 {
				return errors.New("1 to 31 characters")
			}
			return nil
		},
		MaxKey:  31,
		Src:     src,
		MaxRows: 2,
	}
	return t, src
}

// Column numbers: 1 the index, 2..4 Cols, 5 StorageType, 6 RowStatus.
const (
	colStat, colThreshold, colNumber, colStorage, colStatus = 2, 3, 4, 5, 6
)

func set(t *testing.T, w *Writer, vbs ...agentx.VarBind) *agentx.SetError {
	t.Helper()
	ch, serr := w.TestSet(vbs)
	if serr != nil {
		return serr
	}
	if err := ch.Commit(); err != nil {
		t.Fatalf("commit: %v", err)
	}
	ch.Cleanup()
	return nil
}

func cell(tb *Table, col uint32, row string, v asn1tree.Value) agentx.VarBind {
	return agentx.VarBind{OID: tb.IndexOID(col, row), Value: v}
}

// createAndWait leaves a row notReady until its required column is set,
// then notInService until made active, when it reaches the source with
// its default; destroy takes it away.
func TestRowLife(t *testing.T) {
	tb, src := testTable()
	w := NewWriter(nil, tb)
	if serr := set(t, w, cell(tb, colStatus, "hot", asn1tree.Int(CreateAndWait))); serr != nil {
		t.Fatal(serr)
	}
	if p := tb.pending["hot"]; p.row == nil || p.row.Status != NotReady {
		t.Fatalf("after createAndWait: %+v, want notReady", p)
	}
	if serr := set(t, w, cell(tb, colStatus, "hot", asn1tree.Int(Active))); serr == nil || serr.Code != agentx.InconsistentValue {
		t.Fatalf("active while notReady: %v, want inconsistentValue", serr)
	}
	if serr := set(t, w, cell(tb, colStat, "hot", asn1tree.Str("Disk/*/qlen"))); serr != nil {
		t.Fatal(serr)
	}
	if p := tb.pending["hot"]; p.row.Status != NotInService {
		t.Fatalf("complete: status %d, want notInService", p.row.Status)
	}
	if _, ok := src.m["hot"]; ok {
		t.Fatal("a row not active reached the source")
	}
	if serr := set(t, w, cell(tb, colStatus, "hot", asn1tree.Int(Active))); serr != nil {
		t.Fatal(serr)
	}
	r, ok := src.m["hot"]
	if !ok || r.Status != Active || r.Storage != NonVolatile || r.Vals[1].Signed() != 80 || len(tb.pending) != 0 {
		t.Fatalf("active: %+v (pending %d), want the row nonVolatile with threshold 80", r, len(tb.pending))
	}
	if serr := set(t, w, cell(tb, colStatus, "hot", asn1tree.Int(Destroy))); serr != nil {
		t.Fatal(serr)
	}
	if _, ok := src.m["hot"]; ok {
		t.Fatal("destroy left the row")
	}
}

// Each refusal is the RFC 3416 error a manager's tool reports usefully,
// at the VarBind at fault, and a refused SET changes nothing.
func TestRefusals(t *testing.T) {
	tb, src := testTable()
	w := NewWriter(nil, tb)
	good := func(row string) []agentx.VarBind {
		return []agentx.VarBind{cell(tb, colStat, row, asn1tree.Str("Disk/*/busy")), cell(tb, colStatus, row, asn1tree.Int(CreateAndGo))}
	}
	for _, c := range []struct {
		name  string
		vbs   []agentx.VarBind
		code  agentx.ErrorCode
		index int
	}{
		{"wrong type", append(good("a"), cell(tb, colThreshold, "a", asn1tree.Str("80"))), agentx.WrongType, 3},
		{"too short", []agentx.VarBind{cell(tb, colStatus, "a", asn1tree.Int(CreateAndGo)), cell(tb, colStat, "a", asn1tree.Str("Disk"))}, agentx.WrongLength, 2},
		{"out of range", append(good("a"), cell(tb, colThreshold, "a", asn1tree.Int(101))), agentx.WrongValue, 3},
		{"read-only column", append(good("a"), cell(tb, colNumber, "a", asn1tree.Gauge(7))), agentx.NotWritable, 3},
		{"incomplete createAndGo", []agentx.VarBind{cell(tb, colStatus, "a", asn1tree.Int(CreateAndGo))}, agentx.InconsistentValue, 1},
		{"no such row", []agentx.VarBind{cell(tb, colThreshold, "b", asn1tree.Int(5))}, agentx.NoCreation, 1},
		{"bad index", []agentx.VarBind{cell(tb, colStatus, "", asn1tree.Int(CreateAndGo))}, agentx.NoCreation, 1},
		{"source refuses", []agentx.VarBind{cell(tb, colStat, "a", asn1tree.Str("nope/x")), cell(tb, colStatus, "a", asn1tree.Int(CreateAndGo))}, agentx.InconsistentValue, 1},
		{"configured row's column", []agentx.VarBind{cell(tb, colThreshold, "conf", asn1tree.Int(5))}, agentx.NotWritable, 1},
		{"destroy a configured row", []agentx.VarBind{cell(tb, colStatus, "conf", asn1tree.Int(Destroy))}, agentx.WrongValue, 1},
		{"StorageType permanent", append(good("a"), cell(tb, colStorage, "a", asn1tree.Int(Permanent))), agentx.WrongValue, 3},
		{"RowStatus notReady", []agentx.VarBind{cell(tb, colStatus, "a", asn1tree.Int(NotReady))}, agentx.WrongValue, 1},
		{"one bad among five", append(append(good("a"), good("b")...), cell(tb, colThreshold, "b", asn1tree.Int(-1))), agentx.WrongValue, 5},
	} {
		serr := set(t, w, c.vbs...)
		if serr == nil || serr.Code != c.code || serr.Index != c.index {
			t.Errorf("%s: %v, want %s at %d", c.name, serr, c.code, c.index)
		}
	}
	if len(src.m) != 1 || len(tb.pending) != 0 {
		t.Errorf("refused SETs changed the rows: %v, pending %d", src.Rows(), len(tb.pending))
	}
}

// Active rows created over SNMP are bounded; the configured ones do not
// count; a source that is full says so.
func TestRowLimit(t *testing.T) {
	tb, src := testTable()
	w := NewWriter(nil, tb)
	for _, name := range []string{"a", "b"} {
		if serr := set(t, w, cell(tb, colStat, name, asn1tree.Str("Disk/*/busy")), cell(tb, colStatus, name, asn1tree.Int(CreateAndGo))); serr != nil {
			t.Fatal(serr)
		}
	}
	if serr := set(t, w, cell(tb, colStat, "c", asn1tree.Str("Disk/*/busy")), cell(tb, colStatus, "c", asn1tree.Int(CreateAndGo))); serr == nil || serr.Code != agentx.ResourceUnavailable {
		t.Fatalf("a third row with a limit of 2: %v, want resourceUnavailable", serr)
	}
	// A row waiting counts apart; made active it counts with the others.
	if serr := set(t, w, cell(tb, colStat, "w", asn1tree.Str("Disk/*/busy")), cell(tb, colStatus, "w", asn1tree.Int(CreateAndWait))); serr != nil {
		t.Fatalf("a row waiting beside 2 active ones: %v", serr)
	}
	if serr := set(t, w, cell(tb, colStatus, "w", asn1tree.Int(Active))); serr == nil || serr.Code != agentx.ResourceUnavailable {
		t.Fatalf("activating a third row: %v, want resourceUnavailable", serr)
	}
	if serr := set(t, w, cell(tb, colStatus, "b", asn1tree.Int(Destroy))); serr != nil {
		t.Fatal(serr)
	}
	if serr := set(t, w, cell(tb, colStatus, "w", asn1tree.Int(Active))); serr != nil {
		t.Fatalf("activating w once b is gone: %v", serr)
	}
	src.full = true
	if serr := set(t, w, cell(tb, colStat, "c", asn1tree.Str("Disk/*/busy")), cell(tb, colStatus, "c", asn1tree.Int(CreateAndGo))); serr == nil || serr.Code != agentx.ResourceUnavailable {
		t.Fatalf("a full source: %v, want resourceUnavailable", serr)
	}
}

// One manager holding the most rows waiting (notReady and notInService)
// gets resourceUnavailable for one more, while another manager's
// createAndGo still succeeds: rows waiting cannot take the active rows'
// places. A row waiting that becomes active frees its waiting place.
func TestWaitingRowsHaveTheirOwnLimit(t *testing.T) {
	tb, src := testTable()
	tb.MaxRows, tb.MaxWaiting = 3, 4
	w := NewWriter(nil, tb)
	for i := range 4 {
		vbs := []agentx.VarBind{cell(tb, colStatus, fmt.Sprint("wait", i), asn1tree.Int(CreateAndWait))}
		if i%2 == 1 { // notInService: complete
			vbs = append(vbs, cell(tb, colStat, fmt.Sprint("wait", i), asn1tree.Str("Disk/*/busy")))
		}
		if serr := set(t, w, vbs...); serr != nil {
			t.Fatalf("waiting row %d: %v", i, serr)
		}
	}
	if serr := set(t, w, cell(tb, colStatus, "wait4", asn1tree.Int(CreateAndWait))); serr == nil || serr.Code != agentx.ResourceUnavailable {
		t.Fatalf("a fifth row waiting with max 4: %v, want resourceUnavailable", serr)
	}
	if serr := set(t, w, cell(tb, colStat, "other", asn1tree.Str("Disk/*/busy")), cell(tb, colStatus, "other", asn1tree.Int(CreateAndGo))); serr != nil {
		t.Fatalf("another manager's createAndGo beside 4 rows waiting: %v", serr)
	}
	if serr := set(t, w, cell(tb, colStatus, "wait1", asn1tree.Int(Active))); serr != nil {
		t.Fatalf("activating a row waiting: %v", serr)
	}
	if serr := set(t, w, cell(tb, colStatus, "wait4", asn1tree.Int(CreateAndWait))); serr != nil {
		t.Fatalf("a row waiting once one became active: %v", serr)
	}
	if _, ok := src.m["wait1"]; !ok || len(tb.pending) != 4 {
		t.Errorf("active %v, waiting %d, want wait1 active and 4 waiting", src.Rows(), len(tb.pending))
	}
}

// Undo after a commit puts back exactly what was there: a replaced row,
// a destroyed one, a row waiting.
func TestUndoPutsBack(t *testing.T) {
	tb, src := testTable()
	w := NewWriter(nil, tb)
	if serr := set(t, w, cell(tb, colStat, "a", asn1tree.Str("Disk/*/busy")), cell(tb, colStatus, "a", asn1tree.Int(CreateAndGo))); serr != nil {
		t.Fatal(serr)
	}
	if serr := set(t, w, cell(tb, colStatus, "w", asn1tree.Int(CreateAndWait))); serr != nil {
		t.Fatal(serr)
	}
	before, waiting := src.Rows(), tb.pending["w"].row.clone()
	ch, serr := w.TestSet([]agentx.VarBind{
		cell(tb, colThreshold, "a", asn1tree.Int(10)),
		cell(tb, colStatus, "w", asn1tree.Int(Destroy)),
		cell(tb, colStat, "n", asn1tree.Str("Proc/*/cpu")), cell(tb, colStatus, "n", asn1tree.Int(CreateAndGo)),
	})
	if serr != nil {
		t.Fatal(serr)
	}
	if err := ch.Commit(); err != nil {
		t.Fatal(err)
	}
	if src.m["a"].Vals[1].Signed() != 10 || src.m["n"].Name != "n" || tb.pending["w"].row != nil {
		t.Fatalf("commit: %v, pending %v", src.Rows(), tb.pending)
	}
	if err := ch.Undo(); err != nil {
		t.Fatal(err)
	}
	ch.Cleanup()
	if got := fmt.Sprint(src.Rows()); got != fmt.Sprint(before) {
		t.Errorf("after undo the rows are %s, want %v", got, before)
	}
	if p := tb.pending["w"].row; p == nil || fmt.Sprint(*p) != fmt.Sprint(*waiting) {
		t.Errorf("after undo the waiting row is %+v, want %+v", p, waiting)
	}
}

// A row left waiting longer than PendingTTL is no longer served, and is
// dropped at the next SET.
func TestWaitingRowsExpire(t *testing.T) {
	tb, _ := testTable()
	tb.PendingTTL = time.Minute
	t0 := time.Unix(1_700_000_000, 0)
	ch, serr := tb.test([]agentx.VarBind{cell(tb, colStatus, "w", asn1tree.Int(CreateAndWait))}, []int{1}, t0)
	if serr != nil {
		t.Fatal(serr)
	}
	if err := ch.commit(t0); err != nil {
		t.Fatal(err)
	}
	if _, serr := tb.test([]agentx.VarBind{cell(tb, colStatus, "x", asn1tree.Int(CreateAndWait))}, []int{1}, t0.Add(59*time.Second)); serr != nil || tb.pending["w"].row == nil {
		t.Fatalf("within the minute: %v, waiting rows %v", serr, tb.pending)
	}
	// The row conf has 5 cells; w its threshold (a default), StorageType and RowStatus.
	if n := len(tb.entries(nil, tb.rowsAt(t0.Add(59*time.Second)))); n != 5+3 {
		t.Fatalf("within the minute the table serves %d cells, want 8: conf's 5 and the waiting row's 3", n)
	}
	if es := tb.entries(nil, tb.rowsAt(t0.Add(61*time.Second))); len(es) != 5 {
		t.Fatalf("after the minute, before any SET, the table serves %d cells, want only the 5 of the row conf", len(es))
	}
	if _, serr := tb.test([]agentx.VarBind{cell(tb, colStatus, "x", asn1tree.Int(CreateAndWait))}, []int{1}, t0.Add(61*time.Second)); serr != nil || len(tb.pending) != 0 {
		t.Fatalf("after the minute: %v, waiting rows %v, want none", serr, tb.pending)
	}
}

// Columns Added after RowStatus keep their numbers: a row's Vals hold
// them after Cols, with their defaults; they are written, range-checked
// and served at RowStatus+1 on, and StorageType and RowStatus stay where
// they were.
func TestAddedColumns(t *testing.T) {
	tb, src := testTable()
	no := asn1tree.Int(2)
	tb.Added = []Col{
		{Name: "rearm", Kind: asn1tree.Integer32, Min: -100, Max: 100, Default: ptrTo(asn1tree.Int(0))},
		{Name: "cleared", Kind: asn1tree.Integer32, Min: 1, Max: 2, Default: &no},
	}
	src.m["conf"] = Row{Name: "conf", Vals: []asn1tree.Value{asn1tree.Str("Disk/*/busy"), eighty, asn1tree.Gauge(1), asn1tree.Int(0), no}, Status: Active, Storage: ReadOnly}
	const colRearm, colCleared = colStatus + 1, colStatus + 2
	w := NewWriter(nil, tb)
	if serr := set(t, w, cell(tb, colStat, "hot", asn1tree.Str("Disk/*/busy")), cell(tb, colCleared, "hot", asn1tree.Int(3)),
		cell(tb, colStatus, "hot", asn1tree.Int(CreateAndGo))); serr == nil || serr.Code != agentx.WrongValue || serr.Index != 2 {
		t.Fatalf("cleared 3: %v, want wrongValue at varbind 2", serr)
	}
	if serr := set(t, w, cell(tb, colStat, "hot", asn1tree.Str("Disk/*/busy")), cell(tb, colRearm, "hot", asn1tree.Int(-7)),
		cell(tb, colStorage, "hot", asn1tree.Int(Volatile)), cell(tb, colStatus, "hot", asn1tree.Int(CreateAndGo))); serr != nil {
		t.Fatal(serr)
	}
	r := src.m["hot"]
	if len(r.Vals) != 5 || r.Vals[3].Signed() != -7 || r.Vals[4].Signed() != 2 || r.Storage != Volatile {
		t.Fatalf("row %+v, want rearm -7, cleared its default 2, volatile", r)
	}
	if serr := set(t, w, cell(tb, colStatus+3, "hot", asn1tree.Int(1))); serr == nil || serr.Code != agentx.NotWritable {
		t.Fatalf("column %d, past the last: %v, want notWritable", colStatus+3, serr)
	}
	v := w.View()
	for col, want := range map[uint32]int64{colRearm: -7, colCleared: 2, colStorage: Volatile, colStatus: Active} {
		if got, ok := v.Get(tb.IndexOID(col, "hot")); !ok || got.Signed() != want {
			t.Errorf("column %d: %v (served %v), want %d", col, got, ok, want)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
