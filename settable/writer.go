package settable

import (
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/perfagent/subagent/agentx"
	"github.com/perfagent/subagent/asn1tree"
)

// Writer is the agentx.Writer of a set of tables, and the View of their
// rows for the readers.
type Writer struct {
	tables []*Table
	log    *slog.Logger

	mu       sync.Mutex
	view     *tableView
	built    time.Time
	gen      uint64 // views dropped by a Set: a rebuild started before one is stale
	building bool   // a view is being rebuilt in the background
	now      func() time.Time
}

// viewTTL is how long a built view of the rows is served before it is
// rebuilt: rows also change outside SNMP (a reload, `subagent create`).
const viewTTL = time.Second

// NewWriter serves tables; log receives one line per committed change.
func NewWriter(log *slog.Logger, tables ...*Table) *Writer {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Writer{tables: tables, log: log, now: time.Now}
}

// TestSet implements agentx.Writer: every VarBind must fall in one of the
// tables, and each table judges its rows.
func (w *Writer) TestSet(vbs []agentx.VarBind) (agentx.Change, *agentx.SetError) {
	per := make([][]agentx.VarBind, len(w.tables))
	idx := make([][]int, len(w.tables))
next:
	for i, v := range vbs {
		for k, t := range w.tables {
			if v.OID.HasPrefix(t.Entry) {
				per[k] = append(per[k], v)
				idx[k] = append(idx[k], i+1)
				continue next
			}
		}
		return nil, agentx.Refuse(agentx.NotWritable, i+1, "%s is not a writable object", v.OID)
	}
	ch := &change{w: w}
	now := time.Now()
	for k, t := range w.tables {
		if len(per[k]) == 0 {
			continue
		}
		tc, serr := t.test(per[k], idx[k], now)
		if serr != nil {
			return nil, serr
		}
		ch.parts = append(ch.parts, tc)
	}
	return ch, nil
}

type change struct {
	w     *Writer
	parts []*tableChange
}

func (c *change) Commit() error {
	defer c.w.invalidate()
	now := time.Now()
	for _, p := range c.parts {
		if err := p.commit(now); err != nil {
			return err
		}
	}
	for _, p := range c.parts {
		for _, op := range p.ops {
			status := "destroyed"
			if op.row != nil {
				status = statusName(op.row.Status)
			}
			c.w.log.Info("row set over SNMP", "table", p.t.Name, "row", op.name, "status", status)
		}
	}
	return nil
}

func (c *change) Undo() error {
	defer c.w.invalidate()
	var errs []error
	for i := len(c.parts) - 1; i >= 0; i-- {
		if err := c.parts[i].undo(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (c *change) Cleanup() {}

func (w *Writer) invalidate() {
	w.mu.Lock()
	w.view = nil
	w.gen++
	w.mu.Unlock()
}

// View is the tables' rows: a view built less than viewTTL ago, or after
// the last Set. A view past 3/4 of viewTTL is rebuilt in the background
// while it is served, so that requests that come steadily never wait for
// the rebuild of thousands of rows (derived statistics and alarms
// configured); a request after a Set, or after a pause longer than
// viewTTL, waits for it, as it always did.
func (w *Writer) View() asn1tree.View {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	age := now.Sub(w.built)
	switch {
	case w.view == nil || age >= viewTTL:
		w.view, w.built = w.build(now, w.view), now
	case age >= viewTTL*3/4 && !w.building:
		w.building = true
		go w.rebuild(w.gen, w.view)
	}
	return w.view
}

// rebuild replaces the view cur unless a Set dropped it since gen, or a
// newer one replaced it meanwhile.
func (w *Writer) rebuild(gen uint64, cur *tableView) {
	now := w.now()
	v := w.build(now, cur)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.building = false
	if w.gen == gen && w.view != nil && now.After(w.built) {
		w.view, w.built = v, now
	}
}

// build makes a view of the tables' rows at now: cur (nil: none) when
// they are its rows, so that thousands of configured rows that do not
// change are not indexed again at every viewTTL.
func (w *Writer) build(now time.Time, cur *tableView) *tableView {
	rows := make([][]Row, len(w.tables))
	for i, t := range w.tables {
		rows[i] = t.rowsAt(now)
	}
	if cur != nil && slices.EqualFunc(cur.rows, rows, func(a, b []Row) bool { return slices.EqualFunc(a, b, sameRow) }) {
		return cur
	}
	var es []asn1tree.Entry[asn1tree.Value]
	for i, t := range w.tables {
		es = t.entries(es, rows[i])
	}
	v, err := asn1tree.Build(es)
	if err != nil {
		w.log.Error("writable tables not served", "err", err)
		v, _ = asn1tree.Build[asn1tree.Value](nil)
	}
	return &tableView{Tree: v, tables: w.tables, rows: rows}
}

func sameRow(a, b Row) bool {
	return a.Name == b.Name && a.Status == b.Status && a.Storage == b.Storage && slices.EqualFunc(a.Vals, b.Vals, func(x, y asn1tree.Value) bool {
		return x.Kind == y.Kind && x.Num == y.Num && x.Str == y.Str && slices.Equal(x.OID, y.OID)
	})
}

// tableView serves the rows and defines every column of the tables, so
// that a Get of a missing row is noSuchInstance.
type tableView struct {
	*asn1tree.Tree[asn1tree.Value]
	tables []*Table
	rows   [][]Row // by table: what the view serves
}

func (v *tableView) Defines(name asn1tree.OID) bool {
	for _, t := range v.tables {
		if name.HasPrefix(t.Entry) && len(name) > len(t.Entry) {
			col := name[len(t.Entry)]
			return col >= 2 && col <= t.lastCol()
		}
	}
	return false
}
