package settable

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/perfagent/subagent/agentx"
	"github.com/perfagent/subagent/asn1tree"
)

// ErrFull is wrapped by a Source's error when a row would pass a limit:
// the manager gets resourceUnavailable.
var ErrFull = errors.New("row limit reached")

// Source owns a table's active rows.
type Source interface {
	// Rows lists the rows the source holds, all active; those a manager
	// may not change (from the configuration) with StorageType ReadOnly.
	Rows() []Row
	// Check tells whether r may become active (old is the active row it
	// replaces, or nil), without waiting for anything. Its error is the
	// manager's inconsistentValue, or resourceUnavailable when it wraps
	// ErrFull.
	Check(old *Row, r *Row) error
	// Put makes r active, creating or replacing it; Remove takes it away.
	Put(r *Row) error
	Remove(name string) error
}

// Table is one writable table: entry.<column>.<index>, the index a
// length-prefixed name (not IMPLIED). Column 1 is the index (not
// accessible), then Cols, then StorageType, then RowStatus, then Added
// (columns added later keep the numbers of those before them).
type Table struct {
	Name     string       // for errors and logs, e.g. hotsetDefTable
	Entry    asn1tree.OID // the table's entry
	Cols     []Col
	Added    []Col
	CheckKey func(name string) error // a name that may be an index
	MaxKey   int                     // longest index name
	Src      Source
	// MaxRows bounds the active rows managers hold (all but ReadOnly
	// ones). Once serving, change it with SetMaxRows. MaxRowsSetting
	// names the setting that gives it, for the refusal.
	MaxRows        int
	MaxRowsSetting string
	// MaxWaiting bounds, apart, the rows waiting in notReady or
	// notInService: rows that wait cannot take the places of active ones.
	// 0 means DefaultMaxWaiting. Once serving, change it with SetWaiting.
	MaxWaiting int
	// PendingTTL is how long a row may stay notReady or notInService
	// before it is dropped (RFC 2579: a few minutes). 0 means
	// DefaultPendingTTL.
	PendingTTL time.Duration

	// change orders commits and undos, which change the source (Put and
	// Remove may save to disk): mu, which readers take (entries), is
	// never held across the source's changes.
	change  sync.Mutex
	mu      sync.Mutex
	pending map[string]pendingRow // rows not active, held here
}

// Defaults of MaxWaiting and PendingTTL (snmp_set.max_waiting_rows,
// snmp_set.waiting_lifetime).
const (
	DefaultMaxWaiting = 10
	DefaultPendingTTL = time.Minute
)

// SetMaxRows changes MaxRows and returns the active rows managers hold
// now: beyond a lowered limit they are kept, and no row is created until
// fewer remain.
func (t *Table) SetMaxRows(n int) (held int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.MaxRows = n
	for _, r := range t.Src.Rows() {
		if r.Storage != ReadOnly {
			held++
		}
	}
	return held
}

// SetWaiting changes MaxWaiting and PendingTTL (0: their defaults); rows
// waiting beyond a lowered limit are kept until they expire.
func (t *Table) SetWaiting(n int, ttl time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.MaxWaiting, t.PendingTTL = n, ttl
	t.reapLocked(time.Now())
}

func (t *Table) maxWaiting() int {
	if t.MaxWaiting <= 0 {
		return DefaultMaxWaiting
	}
	return t.MaxWaiting
}

type pendingRow struct {
	row   *Row
	since time.Time
}

func (t *Table) storageCol() uint32 { return uint32(len(t.Cols)) + 2 }
func (t *Table) statusCol() uint32  { return uint32(len(t.Cols)) + 3 }
func (t *Table) lastCol() uint32    { return t.statusCol() + uint32(len(t.Added)) }

// allCols are Cols then Added: a Row's Vals in order.
func (t *Table) allCols() []Col { return append(t.Cols[:len(t.Cols):len(t.Cols)], t.Added...) }

// colArc is the column number of allCols()[i]; valIndex is the reverse,
// -1 for StorageType and RowStatus.
func (t *Table) colArc(i int) uint32 {
	if i < len(t.Cols) {
		return uint32(i) + 2
	}
	return uint32(i) + 4
}

func (t *Table) valIndex(col uint32) int {
	switch {
	case col < t.storageCol():
		return int(col) - 2
	case col > t.statusCol():
		return int(col) - 4
	}
	return -1
}

// IndexOID is the OID of column col of the row named name.
func (t *Table) IndexOID(col uint32, name string) asn1tree.OID {
	o := append(t.Entry.Clone(), col, uint32(len(name)))
	for i := 0; i < len(name); i++ {
		o = append(o, uint32(name[i]))
	}
	return o
}

// parse splits a VarBind's OID into column and row name.
func (t *Table) parse(o asn1tree.OID) (col uint32, name string, ok bool) {
	if !o.HasPrefix(t.Entry) || len(o) < len(t.Entry)+2 {
		return 0, "", false
	}
	col, idx := o[len(t.Entry)], o[len(t.Entry)+1:]
	if int(idx[0]) != len(idx)-1 || len(idx)-1 > t.MaxKey || len(idx) == 1 {
		return col, "", false
	}
	b := make([]byte, len(idx)-1)
	for i, x := range idx[1:] {
		if x < 0x20 || x > 0x7e {
			return col, "", false
		}
		b[i] = byte(x)
	}
	return col, string(b), true
}

// vb is a VarBind of this table with its place in the TestSet.
type vb struct {
	index int // 1-based in the TestSet
	col   uint32
	val   asn1tree.Value
}

// rowOp is what a Set does to one row: from old (active in the source,
// or nil) and oldPending (held here, or nil) to row (nil: gone), active
// in the source or held here.
type rowOp struct {
	name       string
	old        *Row
	oldPending *pendingRow
	row        *Row
	active     bool
	done       bool
}

// test judges this table's VarBinds of one TestSet, grouped by row.
func (t *Table) test(vbs []agentx.VarBind, idx []int, now time.Time) (*tableChange, *agentx.SetError) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reapLocked(now)
	rows := map[string][]vb{}
	var order []string
	for k, v := range vbs {
		col, name, ok := t.parse(v.OID)
		i := idx[k]
		switch {
		case col < 2 || col > t.lastCol():
			return nil, agentx.Refuse(agentx.NotWritable, i, "%s: %s has no writable column %d", t.Name, v.OID, col)
		case !ok:
			return nil, agentx.Refuse(agentx.NoCreation, i, "%s: %s: the index is not a name of 1 to %d printable characters", t.Name, v.OID, t.MaxKey)
		}
		if err := t.CheckKey(name); err != nil {
			return nil, agentx.Refuse(agentx.NoCreation, i, "%s: index %q: %v", t.Name, name, err)
		}
		if _, seen := rows[name]; !seen {
			order = append(order, name)
		}
		rows[name] = append(rows[name], vb{index: i, col: col, val: v.Value})
	}
	active := map[string]*Row{}
	held, waiting := 0, len(t.pending)
	for _, r := range t.Src.Rows() {
		active[r.Name] = r.clone()
		if r.Storage != ReadOnly {
			held++
		}
	}
	ch := &tableChange{t: t}
	for _, name := range order {
		op, serr := t.testRow(name, rows[name], active[name])
		if serr != nil {
			return nil, serr
		}
		// Active rows and waiting ones have limits of their own: a row
		// counts where the SET leaves it.
		wasActive, wasWaiting := op.old != nil, op.oldPending != nil
		isActive, isWaiting := op.row != nil && op.active, op.row != nil && !op.active
		held += b2i(isActive) - b2i(wasActive)
		waiting += b2i(isWaiting) - b2i(wasWaiting)
		switch at := rows[name][0].index; {
		case isActive && !wasActive && held > t.MaxRows:
			return nil, agentx.Refuse(agentx.ResourceUnavailable, at,
				"%s: row %q would pass the limit of %d rows created over SNMP%s", t.Name, name, t.MaxRows, t.limitName())
		case isWaiting && !wasWaiting && waiting > t.maxWaiting():
			return nil, agentx.Refuse(agentx.ResourceUnavailable, at,
				"%s: row %q would pass the limit of %d rows waiting in notReady or notInService (snmp_set.max_waiting_rows)", t.Name, name, t.maxWaiting())
		}
		ch.ops = append(ch.ops, op)
	}
	return ch, nil
}

func (t *Table) limitName() string {
	if t.MaxRowsSetting == "" {
		return ""
	}
	return " (" + t.MaxRowsSetting + ")"
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// testRow works out what the VarBinds of one row do to it.
func (t *Table) testRow(name string, vbs []vb, cur *Row) (*rowOp, *agentx.SetError) {
	op := &rowOp{name: name, old: cur}
	if p, ok := t.pending[name]; ok {
		op.oldPending = &p
	}
	var row *Row
	switch {
	case cur != nil:
		row = cur.clone()
	case op.oldPending != nil:
		row = op.oldPending.row.clone()
	}
	status, statusAt := 0, 0
	for _, v := range vbs {
		if v.col == t.statusCol() {
			if v.val.Kind != asn1tree.Integer32 {
				return nil, agentx.Refuse(agentx.WrongType, v.index, "%s: RowStatus is %s, want INTEGER", t.Name, v.val.Kind)
			}
			status, statusAt = int(v.val.Signed()), v.index
		}
	}
	first := vbs[0].index
	switch status {
	case 0, Active, NotInService:
		if row == nil {
			if status == 0 {
				return nil, agentx.Refuse(agentx.NoCreation, first, "%s: no row %q; create it with RowStatus createAndGo or createAndWait", t.Name, name)
			}
			return nil, agentx.Refuse(agentx.InconsistentValue, statusAt, "%s: no row %q to set %s", t.Name, name, statusName(status))
		}
	case CreateAndGo, CreateAndWait:
		if row != nil {
			return nil, agentx.Refuse(agentx.InconsistentValue, statusAt, "%s: row %q exists already", t.Name, name)
		}
		row = &Row{Name: name, Vals: make([]asn1tree.Value, len(t.allCols())), Storage: NonVolatile}
		for i, c := range t.allCols() {
			if c.Default != nil {
				row.Vals[i] = *c.Default
			}
		}
	case Destroy:
		if row != nil && (row.Storage == ReadOnly || row.Storage == Permanent) {
			return nil, agentx.Refuse(agentx.WrongValue, statusAt, "%s: row %q is from the configuration file (StorageType %s) and cannot be destroyed", t.Name, name, storageName(row.Storage))
		}
		return op, nil // also a row that does not exist
	default:
		return nil, agentx.Refuse(agentx.WrongValue, statusAt, "%s: RowStatus %d cannot be written", t.Name, status)
	}
	if row.Storage == ReadOnly {
		return nil, agentx.Refuse(agentx.NotWritable, first, "%s: row %q is from the configuration file (StorageType readOnly)", t.Name, name)
	}
	for _, v := range vbs {
		if v.col == t.statusCol() {
			continue
		}
		if serr := t.setCol(row, v, cur != nil || op.oldPending != nil); serr != nil {
			return nil, serr
		}
	}
	complete := complete(t.allCols(), row)
	switch {
	case status == CreateAndGo && !complete, status == Active && !complete:
		return nil, agentx.Refuse(agentx.InconsistentValue, statusAt, "%s: row %q lacks %s", t.Name, name, t.missing(row))
	case status == CreateAndGo, status == Active, status == 0 && cur != nil:
		row.Status, op.active = Active, true
		if err := t.Src.Check(cur, row); err != nil {
			code := agentx.InconsistentValue
			if errors.Is(err, ErrFull) {
				code = agentx.ResourceUnavailable
			}
			return nil, agentx.Refuse(code, first, "%s: row %q: %v", t.Name, name, err)
		}
	case complete:
		row.Status = NotInService
	default:
		row.Status = NotReady
	}
	op.row = row
	return op, nil
}

// setCol checks one column's value and sets it in row.
func (t *Table) setCol(row *Row, v vb, exists bool) *agentx.SetError {
	if v.col == t.storageCol() {
		if v.val.Kind != asn1tree.Integer32 {
			return agentx.Refuse(agentx.WrongType, v.index, "%s: StorageType is %s, want INTEGER", t.Name, v.val.Kind)
		}
		s := int(v.val.Signed())
		switch {
		case s != Volatile && s != NonVolatile:
			return agentx.Refuse(agentx.WrongValue, v.index, "%s: StorageType %d: rows created over SNMP are volatile(2) or nonVolatile(3)", t.Name, s)
		case exists && s != row.Storage:
			return agentx.Refuse(agentx.InconsistentValue, v.index, "%s: row %q: StorageType is chosen at creation", t.Name, row.Name)
		}
		row.Storage = s
		return nil
	}
	k := t.valIndex(v.col)
	c := t.allCols()[k]
	if c.ReadOnly {
		return agentx.Refuse(agentx.NotWritable, v.index, "%s: %s is read-only", t.Name, c.Name)
	}
	if v.val.Kind != c.Kind {
		return agentx.Refuse(agentx.WrongType, v.index, "%s: %s is %s, want %s", t.Name, c.Name, v.val.Kind, c.Kind)
	}
	switch c.Kind {
	case asn1tree.OctetString:
		if n := int64(len(v.val.Str)); n < c.Min || n > c.Max {
			return agentx.Refuse(agentx.WrongLength, v.index, "%s: %s is %d octets, want %d to %d", t.Name, c.Name, n, c.Min, c.Max)
		}
	default:
		if n := v.val.Signed(); n < c.Min || n > c.Max {
			return agentx.Refuse(agentx.WrongValue, v.index, "%s: %s %d is not from %d to %d", t.Name, c.Name, n, c.Min, c.Max)
		}
	}
	row.Vals[k] = v.val
	return nil
}

func (t *Table) missing(r *Row) string {
	for i, v := range r.Vals {
		if c := t.allCols()[i]; v.Kind == asn1tree.NoValue && !c.ReadOnly {
			return c.Name
		}
	}
	return "nothing"
}

// expired tells whether p was left notReady or notInService too long.
func (t *Table) expired(p pendingRow, now time.Time) bool {
	ttl := t.PendingTTL
	if ttl <= 0 {
		ttl = DefaultPendingTTL
	}
	return now.Sub(p.since) > ttl
}

// reapLocked drops the expired rows.
func (t *Table) reapLocked(now time.Time) {
	for name, p := range t.pending {
		if t.expired(p, now) {
			delete(t.pending, name)
		}
	}
}

// tableChange is one table's part of a tested Set.
type tableChange struct {
	t   *Table
	ops []*rowOp
}

// commit applies the ops. A row leaves pending before it reaches the
// source and the source before it enters pending, so that a reader
// never sees it twice (briefly, not at all).
func (c *tableChange) commit(now time.Time) error {
	t := c.t
	t.change.Lock()
	defer t.change.Unlock()
	for _, op := range c.ops {
		op.done = true
		held := t.takePending(op.name)
		switch {
		case op.active:
			if err := t.Src.Put(op.row); err != nil {
				t.putPending(op.name, held)
				return fmt.Errorf("%s: row %q: %w", t.Name, op.name, err)
			}
		default:
			if op.old != nil {
				if err := t.Src.Remove(op.name); err != nil {
					t.putPending(op.name, held)
					return fmt.Errorf("%s: row %q: %w", t.Name, op.name, err)
				}
			}
			if op.row != nil {
				t.putPending(op.name, &pendingRow{row: op.row, since: now})
			}
		}
	}
	return nil
}

// takePending removes name's pending row and returns it (nil: none).
func (t *Table) takePending(name string) *pendingRow {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, ok := t.pending[name]
	if !ok {
		return nil
	}
	delete(t.pending, name)
	return &p
}

// putPending holds p as name's pending row (nil: none).
func (t *Table) putPending(name string, p *pendingRow) {
	if p == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pending == nil {
		t.pending = map[string]pendingRow{}
	}
	t.pending[name] = *p
}

func (c *tableChange) undo() error {
	t := c.t
	t.change.Lock()
	defer t.change.Unlock()
	var errs []error
	for i := len(c.ops) - 1; i >= 0; i-- {
		op := c.ops[i]
		if !op.done {
			continue
		}
		t.takePending(op.name)
		var err error
		switch {
		case op.old != nil:
			err = t.Src.Put(op.old)
		case op.active:
			err = t.Src.Remove(op.name)
		}
		if err != nil {
			errs = append(errs, err)
		}
		t.putPending(op.name, op.oldPending)
		op.done = false
	}
	return errors.Join(errs...)
}

// entries appends the table's cells to es: the source's rows and those
// held here, but for the expired ones (a read does not reap them).
// rowsAt are the rows served at now: the source's and the pending ones
// not expired.
func (t *Table) rowsAt(now time.Time) []Row {
	t.mu.Lock()
	defer t.mu.Unlock()
	rows := t.Src.Rows()
	for _, p := range t.pending {
		if !t.expired(p, now) {
			rows = append(rows, *p.row)
		}
	}
	return rows
}

// entries appends the cells of rows to es.
func (t *Table) entries(es []asn1tree.Entry[asn1tree.Value], rows []Row) []asn1tree.Entry[asn1tree.Value] {
	for _, r := range rows {
		if r.Name == "" || len(r.Name) > t.MaxKey {
			continue // no index the module allows (a configured host of 65 octets or more)
		}
		for i, v := range r.Vals {
			if v.Kind != asn1tree.NoValue {
				es = append(es, asn1tree.Entry[asn1tree.Value]{OID: t.IndexOID(t.colArc(i), r.Name), Val: v})
			}
		}
		es = append(es,
			asn1tree.Entry[asn1tree.Value]{OID: t.IndexOID(t.storageCol(), r.Name), Val: asn1tree.Int(int32(r.Storage))},
			asn1tree.Entry[asn1tree.Value]{OID: t.IndexOID(t.statusCol(), r.Name), Val: asn1tree.Int(int32(r.Status))})
	}
	return es
}

func statusName(s int) string {
	names := []string{"", "active", "notInService", "notReady", "createAndGo", "createAndWait", "destroy"}
	if s > 0 && s < len(names) {
		return names[s]
	}
	return fmt.Sprint(s)
}

func storageName(s int) string {
	names := []string{"", "other", "volatile", "nonVolatile", "permanent", "readOnly"}
	if s > 0 && s < len(names) {
		return names[s]
	}
	return fmt.Sprint(s)
}
