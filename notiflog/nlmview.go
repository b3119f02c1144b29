package notiflog

import (
	"slices"
	"sort"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

// mibView serves a View of the log as NOTIFICATION-LOG-MIB without
// materializing its cells: a full log (10,000 entries of 10 VarBinds)
// has some 400,000, which would take seconds and tens of MB to build at
// every change. Its tables are lists of row positions in OID order, one
// per column; a cell is computed when it is read.
type mibView struct {
	v      View
	fixed  *asn1tree.Tree[asn1tree.Value] // the scalars and the "" rows of nlmConfigLogTable and nlmStatsLogTable
	tables []*vtable
}

// pos is a row: entry i of v.Entries and, in nlmLogVariableTable, its
// VarBind j.
type pos struct{ i, j int32 }

type vcol struct {
	col  uint32
	rows []pos // the rows that have a cell in this column, in OID order
}

// vtable is a conceptual table: cells entry.col.key(row).
type vtable struct {
	entry asn1tree.OID
	cols  []vcol // ascending
	key   func(p pos, k *[3]uint32) asn1tree.OID
	cell  func(col uint32, p pos) asn1tree.Value
}

// newMIBView indexes v; ext is where the outcome table goes (empty:
// none). It reads v only.
func newMIBView(v View, ext asn1tree.OID) *mibView {
	m := &mibView{v: v, fixed: fixedObjects(&v)}
	// Rows in numeric order of nlmLogIndex: the log's order, but for the
	// entries after the index wrapped from 2^32-1 to 1.
	ord := make([]int32, len(v.Entries))
	for i := range ord {
		ord[i] = int32(i)
	}
	sorted := true
	for i := 1; i < len(v.Entries) && sorted; i++ {
		sorted = v.Entries[i-1].Index < v.Entries[i].Index
	}
	if !sorted {
		slices.SortFunc(ord, func(a, b int32) int { return cmpUint(v.Entries[a].Index, v.Entries[b].Index) })
	}
	rows := make([]pos, len(ord))
	nvars := 0
	for k, i := range ord {
		rows[k] = pos{i, -1}
		nvars += len(v.Entries[i].Vars)
	}
	entryKey := func(p pos, k *[3]uint32) asn1tree.OID {
		k[0], k[1] = 0, m.v.Entries[p.i].Index
		return k[:2]
	}
	logCols := make([]vcol, 0, colLogNotificationID-colLogTime+1)
	for c := uint32(colLogTime); c <= colLogNotificationID; c++ {
		logCols = append(logCols, vcol{c, rows})
	}
	m.tables = append(m.tables, &vtable{entry: nlmLogEntry, cols: logCols, key: entryKey, cell: m.logCell})

	all := make([]pos, 0, nvars)
	var byCol [13][]pos
	for _, i := range ord {
		for j := range v.Entries[i].Vars {
			_, col, ok := varType(v.Entries[i].Vars[j].Kind)
			if !ok {
				continue
			}
			p := pos{i, int32(j)}
			all = append(all, p)
			byCol[col] = append(byCol[col], p)
		}
	}
	varCols := []vcol{{colVarID, all}, {colVarType, all}}
	for c := uint32(4); c <= 12; c++ {
		if len(byCol[c]) > 0 {
			varCols = append(varCols, vcol{c, byCol[c]})
		}
	}
	m.tables = append(m.tables, &vtable{entry: nlmVarEntry, cols: varCols, cell: m.varCell,
		key: func(p pos, k *[3]uint32) asn1tree.OID {
			k[0], k[1], k[2] = 0, m.v.Entries[p.i].Index, uint32(p.j)+1
			return k[:3]
		}})

	if len(ext) > 0 {
		outCols := make([]vcol, 0, ColOutOutcome-ColOutDelivered+1)
		for c := uint32(ColOutDelivered); c <= ColOutOutcome; c++ {
			outCols = append(outCols, vcol{c, rows})
		}
		m.tables = append(m.tables, &vtable{entry: ext.Append(1, 1), cols: outCols, key: entryKey, cell: m.outCell})
	}
	return m
}

func cmpUint(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Get returns the cell at oid.
func (m *mibView) Get(oid asn1tree.OID) (asn1tree.Value, bool) {
	if v, ok := m.fixed.Get(oid); ok {
		return v, true
	}
	for _, t := range m.tables {
		if v, ok := t.get(oid); ok {
			return v, true
		}
	}
	return asn1tree.Value{}, false
}

// Search returns the first cell from start (inclusive when include)
// below end (empty: no bound).
func (m *mibView) Search(start asn1tree.OID, include bool, end asn1tree.OID) (asn1tree.OID, asn1tree.Value, bool) {
	bo, bv, found := m.fixed.Search(start, include, nil)
	for _, t := range m.tables {
		if o, v, ok := t.search(start, include); ok && (!found || asn1tree.Compare(o, bo) < 0) {
			bo, bv, found = o, v, true
		}
	}
	if !found || len(end) > 0 && asn1tree.Compare(bo, end) >= 0 {
		return nil, asn1tree.Value{}, false
	}
	return bo, bv, true
}

func (t *vtable) column(col uint32) int {
	return sort.Search(len(t.cols), func(i int) bool { return t.cols[i].col >= col })
}

// rowAt is the first row of c whose key is after suffix (or equal to it
// when include).
func (t *vtable) rowAt(c *vcol, suffix asn1tree.OID, include bool) int {
	var k [3]uint32
	return sort.Search(len(c.rows), func(x int) bool {
		r := asn1tree.Compare(t.key(c.rows[x], &k), suffix)
		return r > 0 || r == 0 && include
	})
}

func (t *vtable) get(oid asn1tree.OID) (asn1tree.Value, bool) {
	n := len(t.entry)
	if len(oid) <= n+1 || !oid.HasPrefix(t.entry) {
		return asn1tree.Value{}, false
	}
	ci := t.column(oid[n])
	if ci == len(t.cols) || t.cols[ci].col != oid[n] {
		return asn1tree.Value{}, false
	}
	c := &t.cols[ci]
	x := t.rowAt(c, oid[n+1:], true)
	var k [3]uint32
	if x == len(c.rows) || asn1tree.Compare(t.key(c.rows[x], &k), oid[n+1:]) != 0 {
		return asn1tree.Value{}, false
	}
	return t.cell(c.col, c.rows[x]), true
}

func (t *vtable) search(start asn1tree.OID, include bool) (asn1tree.OID, asn1tree.Value, bool) {
	n := len(t.entry)
	ci, x := 0, 0
	switch {
	case start.HasPrefix(t.entry) && len(start) > n:
		ci = t.column(start[n])
		if ci < len(t.cols) && t.cols[ci].col == start[n] {
			x = t.rowAt(&t.cols[ci], start[n+1:], include || len(start) == n+1)
		}
	case asn1tree.Compare(start, t.entry) > 0 && !start.HasPrefix(t.entry):
		return nil, asn1tree.Value{}, false // after the table
	}
	for ; ci < len(t.cols); ci, x = ci+1, 0 {
		c := &t.cols[ci]
		if x < len(c.rows) {
			var k [3]uint32
			o := make(asn1tree.OID, 0, n+4)
			o = append(append(append(o, t.entry...), c.col), t.key(c.rows[x], &k)...)
			return o, t.cell(c.col, c.rows[x]), true
		}
	}
	return nil, asn1tree.Value{}, false
}

func (m *mibView) logCell(col uint32, p pos) asn1tree.Value {
	e := &m.v.Entries[p.i]
	switch col {
	case colLogTime:
		up := uint64(e.Uptime / (10 * time.Millisecond))
		if e.Restored {
			up = 0 // of a previous run: RFC 3014 asks for 0
		}
		return asn1tree.Value{Kind: asn1tree.TimeTicks, Num: uint64(uint32(up))}
	case colLogDateAndTime:
		return asn1tree.Str(DateAndTime(e.Time))
	case colLogEngineTDomain:
		return asn1tree.Value{Kind: asn1tree.ObjectIdentifier, OID: zeroDotZero}
	case colLogNotificationID:
		return asn1tree.Value{Kind: asn1tree.ObjectIdentifier, OID: e.OID}
	}
	// nlmLogEngineID, nlmLogEngineTAddress, nlmLogContextEngineID,
	// nlmLogContextName: one local engine, notifications sent, not
	// received: RFC 3014 has them zero-length.
	return asn1tree.Str("")
}

func (m *mibView) varCell(col uint32, p pos) asn1tree.Value {
	vb := &m.v.Entries[p.i].Vars[p.j]
	switch col {
	case colVarID:
		return asn1tree.Value{Kind: asn1tree.ObjectIdentifier, OID: vb.OID}
	case colVarType:
		typ, _, _ := varType(vb.Kind)
		return asn1tree.Int(int32(typ))
	}
	return vb.Value()
}

func (m *mibView) outCell(col uint32, p pos) asn1tree.Value {
	e := &m.v.Entries[p.i]
	ok, failed, pending := countOutcomes(e)
	switch col {
	case ColOutDelivered:
		return asn1tree.Gauge(ok)
	case ColOutFailed:
		return asn1tree.Gauge(failed)
	case ColOutPending:
		return asn1tree.Gauge(pending)
	case ColOutOmitted:
		return asn1tree.Gauge(uint32(e.Omitted))
	}
	return asn1tree.Str(Outcomes(e))
}
