package spmi

import (
	"slices"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
)

// The table view: beside the guide's mapping (one scalar per statistic of
// every instance), the rows of each instantiable context are served as an
// SMIv2 conceptual table, so that one MIB names every host's tree and
// managers (snmptable, snmp_exporter, collectd) see rows with an index.
//
// A context's rows are its direct subcontexts (instances, and permanent
// ones such as an ARM application's transactions), except an aggregate
// (CxDesc.Aggregate: CPU/total), which is served as scalars. Rows of a
// row's own rows (ARM transactions under applications, hotset feed rows
// under hotsets) form a table indexed by both numbers. A table's class is
// the relative id of the context whose rows it holds without the numbers
// of rows (its fixed arcs), and its depth the number of rows above it. It
// lives at
//
//	base.<TablesArc+depth>.<number of fixed arcs>.<fixed arcs>.1 (the entry)
//
// whose columns are ColIndex (not served), ColName and ColDescr (unless
// they would repeat the index or a statistic: RowColumns), and a
// statistic with number a at ColumnOffset+a; a cell is column.<index...>.
// No arc of a table's OID is a row's number, so none ends in 0 (which
// SMIv2 forbids).
const TablesArc = 200

// MaxTableDepth bounds the nesting of tables: arcs TablesArc to
// TablesArc+MaxTableDepth are the table view's.
const MaxTableDepth = 9

// Columns of every table entry.
const (
	ColIndex     = 1
	ColName      = 2
	ColDescr     = 3
	ColumnOffset = 10
)

// Views says which views a snapshot serves.
type Views uint8

// The views.
const (
	ViewScalars Views = 1 << iota
	ViewTables
	ViewBoth = ViewScalars | ViewTables
)

// HasRows reports whether a context's subcontexts are rows of a table: it
// is instantiable by its description (an instance whose template is, such
// as an ARM application, has rows too).
func (n *Node) HasRows() bool { return !n.IsStat() && n.Cx != nil && n.Cx.Inst != ddswire.SiNoInst }

// RowName is CxDesc.RowName of a context ("" for statistics).
func (n *Node) RowName() string {
	if n.Cx == nil {
		return ""
	}
	return n.Cx.RowName
}

// RowColumns says whether the rows of a context with the description cx
// have a name column and a description column: not where they would only
// repeat the index (CxDesc.NameIsNumber) or a statistic (CxDesc.DescrStat).
func RowColumns(cx *CxDesc) (name, descr bool) {
	if cx == nil {
		return true, true
	}
	return !cx.NameIsNumber, cx.DescrStat == ""
}

// rowColumns is RowColumns of row c's table.
func (c *Node) rowColumns() (name, descr bool) {
	if c.Parent == nil {
		return true, true
	}
	return RowColumns(c.Parent.Cx)
}

// TableEntry is the base-relative OID of the entry of the table of depth
// depth whose class has the fixed arcs key (see TablesArc).
func TableEntry(depth int, key asn1tree.OID) asn1tree.OID {
	o := make(asn1tree.OID, 0, len(key)+3)
	o = append(o, TablesArc+uint32(depth), uint32(len(key)))
	o = append(o, key...)
	return append(o, 1)
}

// tableCells collects the cells of the table view. Cells are added row by
// row in tree order, which within a table is index order; appendSorted
// puts them column-major per table with a counting sort, without
// comparing OIDs.
type tableCells struct {
	base    asn1tree.OID
	ids     map[string]int32
	entries []asn1tree.OID // entry OID by table id
	cells   []ref
	keys    []uint64 // table id << 32 | column, parallel to cells
}

func newTableCells(base asn1tree.OID, expect int) *tableCells {
	return &tableCells{base: base, ids: map[string]int32{},
		cells: make([]ref, 0, expect), keys: make([]uint64, 0, expect)}
}

// row adds the cells of row c, whose table has the depth and class key
// and whose index is index, and places c in its table (Node.Cell).
func (t *tableCells) row(c *Node, depth int, key, index asn1tree.OID) {
	if depth > MaxTableDepth {
		return
	}
	rel := TableEntry(depth, key)
	id, ok := t.ids[rel.String()]
	if !ok {
		id = int32(len(t.entries))
		t.ids[rel.String()] = id
		t.entries = append(t.entries, t.base.Append(rel...))
	}
	c.row = &rowInfo{entry: t.entries[id], index: index}
	add := func(col uint32, e ref) {
		e.col = col
		t.keys = append(t.keys, uint64(id)<<32|uint64(col))
		t.cells = append(t.cells, e)
	}
	name, descr := c.rowColumns()
	if name {
		add(ColName, ref{n: c, j: -1})
	}
	if descr {
		add(ColDescr, ref{n: c, j: -1})
	}
	for _, s := range c.Children {
		if s.IsStat() && s.ASN <= ^uint32(0)-ColumnOffset && s.hasView() {
			add(ColumnOffset+s.ASN, ref{n: s, j: -1})
		}
	}
	if c.block != nil {
		for j, d := range c.block.blk.ds {
			if d.ASN <= ^uint32(0)-ColumnOffset {
				add(ColumnOffset+d.ASN, ref{n: c, j: int32(j)})
			}
		}
	}
}

// appendSorted appends the cells to dst in OID order: tables in order of
// their entry, and in each a stable counting sort by column, which keeps
// the rows in index order. It returns nil when the cells do not all come
// after dst's last entry (then the caller merges).
func (t *tableCells) appendSorted(dst []ref) []ref {
	if len(t.cells) == 0 {
		return dst
	}
	rank := make([]int32, len(t.entries))
	order := make([]int32, len(t.entries))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return asn1tree.Compare(t.entries[a], t.entries[b]) })
	for r, id := range order {
		rank[id] = int32(r)
	}
	if len(dst) > 0 && asn1tree.Compare(dst[len(dst)-1].appendOID(nil, t.base), t.entries[order[0]]) >= 0 {
		return nil
	}
	sortKey := func(k uint64) uint64 { return uint64(rank[k>>32])<<32 | k&0xffffffff }
	count := map[uint64]int{}
	for _, k := range t.keys {
		count[sortKey(k)]++
	}
	ks := make([]uint64, 0, len(count))
	for k := range count {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	at := make(map[uint64]int, len(ks))
	next := len(dst)
	for _, k := range ks {
		at[k] = next
		next += count[k]
	}
	dst = slices.Grow(dst, len(t.cells))[:next]
	for i, k := range t.keys {
		sk := sortKey(k)
		dst[at[sk]] = t.cells[i]
		at[sk]++
	}
	return dst
}

// sorted returns the cells alone in OID order.
func (t *tableCells) sorted() []ref { return t.appendSorted(nil) }

// mergeSorted merges two lists in OID order under base; an OID in both
// keeps a's.
func mergeSorted(base asn1tree.OID, a, b []ref) []ref {
	out := make([]ref, 0, len(a)+len(b))
	var x, y asn1tree.OID
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		x, y = a[i].appendOID(x[:0], base), b[j].appendOID(y[:0], base)
		switch c := asn1tree.Compare(x, y); {
		case c < 0:
			out = append(out, a[i])
			i++
		case c > 0:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}
