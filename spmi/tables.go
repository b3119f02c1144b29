package spmi

import (
	"slices"

	"github.com/perfagent/subagent/asn1tree"
)

// The table view: beside the guide's mapping (one scalar per statistic of
// every instance), the rows of each instantiable context are served as an
// SMIv2 conceptual table, so that one MIB names every host's tree and
// managers (snmptable, snmp_exporter, collectd) see rows with an index.
//
// A context's rows are its direct subcontexts (instances, and permanent
// ones such as CPU/total, whose number 0 is then its index). Rows of a
// row's own rows (ARM transactions under applications, hotset feed rows
// under hotsets) form a table indexed by both numbers. A table's class is
// the relative id of the context whose rows it holds without the numbers
// of rows (its fixed arcs), and its depth the number of rows above it. It
// lives at
//
//	base.<TablesArc+depth>.<number of fixed arcs>.<fixed arcs>.1 (the entry)
//
// whose columns are ColIndex (not served), ColName and ColDescr, and a
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
func (n *Node) HasRows() bool { return !n.IsStat() && n.Cx != nil && n.Cx.Inst != SiNoInst }

// RowName is CxDesc.RowName of a context ("" for statistics).
func (n *Node) RowName() string {
	if n.Cx == nil {
		return ""
	}
	return n.Cx.RowName
}

// TableEntry is the base-relative OID of the entry of the table of depth
// depth whose class has the fixed arcs key (see TablesArc).
func TableEntry(depth int, key asn1tree.OID) asn1tree.OID {
	o := make(asn1tree.OID, 0, len(key)+3)
	o = append(o, TablesArc+uint32(depth), uint32(len(key)))
	o = append(o, key...)
	return append(o, 1)
}

// tableCells collects the cells of the table view in OID order.
type tableCells struct {
	base  asn1tree.OID
	cells []asn1tree.Entry[asn1tree.Value]
}

// row adds the cells of row c, whose table has the depth and class key
// and whose index is index.
func (t *tableCells) row(c *Node, depth int, key, index asn1tree.OID) {
	if depth > MaxTableDepth {
		return
	}
	entry := t.base.Append(TableEntry(depth, key)...)
	cell := func(col uint32, v asn1tree.Value) {
		o := make(asn1tree.OID, 0, len(entry)+1+len(index))
		o = append(append(append(o, entry...), col), index...)
		t.cells = append(t.cells, asn1tree.Entry[asn1tree.Value]{OID: o, Val: v})
	}
	cell(ColName, asn1tree.Str(c.Name))
	cell(ColDescr, asn1tree.Str(c.Descr))
	for _, s := range c.Children {
		if !s.IsStat() || s.ASN > ^uint32(0)-ColumnOffset {
			continue
		}
		s.Cell = append(append(append(make(asn1tree.OID, 0, len(entry)+1+len(index)), entry...), ColumnOffset+s.ASN), index...)
		if v := s.Stat.SNMPValue(s.Value); v.Kind != asn1tree.NoValue {
			cell(ColumnOffset+s.ASN, v)
		}
	}
}

// sorted returns the cells in OID order (rows were added in tree order,
// which is row-major; tables are column-major).
func (t *tableCells) sorted() []asn1tree.Entry[asn1tree.Value] {
	slices.SortFunc(t.cells, func(a, b asn1tree.Entry[asn1tree.Value]) int { return asn1tree.Compare(a.OID, b.OID) })
	return t.cells
}

// mergeSorted merges two lists in OID order; an OID in both keeps a's.
func mergeSorted(a, b []asn1tree.Entry[asn1tree.Value]) []asn1tree.Entry[asn1tree.Value] {
	if len(b) == 0 {
		return a
	}
	out := make([]asn1tree.Entry[asn1tree.Value], 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch c := asn1tree.Compare(a[i].OID, b[j].OID); {
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
