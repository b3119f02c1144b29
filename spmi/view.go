package spmi

import "github.com/perfagent/subagent/asn1tree"

// ref is one entry of a part's view. Its OID and value are computed from
// the nodes when asked for, so an entry costs 16 bytes whatever its OID's
// length, and a live statistic's value is read when it is served.
type ref struct {
	// n is the statistic; for a statistic of a block, or a row's name
	// or description, the context.
	n *Node
	// j is the statistic's index in n's block, -1 for n itself.
	j int32
	// col is 0 for the scalar (base.rel.0), else the column of the cell
	// in the table view (ColName, ColDescr, ColumnOffset+ASN).
	col uint32
}

// rowInfo places a context that is a row of a table: the full OID of the
// table's entry and the row's index (see TablesArc).
type rowInfo struct {
	entry asn1tree.OID // shared by the rows of the table
	index asn1tree.OID
}

// appendOID appends the entry's full OID under base to dst.
func (e ref) appendOID(dst, base asn1tree.OID) asn1tree.OID {
	return e.appendRel(append(dst, base...), len(base))
}

// appendRel appends the entry's OID under a base of n arcs, without them.
func (e ref) appendRel(dst asn1tree.OID, n int) asn1tree.OID {
	if e.col == 0 {
		dst = append(dst, e.n.Rel...)
		if e.j >= 0 {
			dst = append(dst, e.n.block.blk.ds[e.j].ASN)
		}
		return append(dst, 0)
	}
	row := e.n
	if row.IsStat() {
		row = row.Parent
	}
	dst = append(append(dst, row.row.entry[n:]...), e.col)
	return append(dst, row.row.index...)
}

// hasView reports whether statistic n is served: a live one is (its value
// is read when asked for), another only if it has a value.
func (n *Node) hasView() bool {
	return n.live != nil || SNMPValue(n.Stat, n.Value).Kind != asn1tree.NoValue
}

// Cell is a statistic's full OID in the table view when its context is a
// row of a table, nil otherwise.
func (n *Node) Cell() asn1tree.OID {
	if !n.IsStat() || n.Parent == nil || n.Parent.row == nil || n.ASN > ^uint32(0)-ColumnOffset {
		return nil
	}
	r := n.Parent.row
	return append(append(r.entry.Clone(), ColumnOffset+n.ASN), r.index...)
}

// oidArena hands out OIDs from chunks of chunk arcs: one allocation per
// chunk rather than per OID. An OID it returns has no spare capacity, so
// appending to it copies.
type oidArena struct {
	buf   []uint32
	chunk int
}

// add returns the arcs fill appends to an empty OID, need of them at most
// (more only costs a copy).
func (a *oidArena) add(need int, fill func(asn1tree.OID) asn1tree.OID) asn1tree.OID {
	if cap(a.buf)-len(a.buf) < need {
		a.buf = make([]uint32, 0, max(a.chunk, need))
	}
	start := len(a.buf)
	a.buf = fill(a.buf)
	return asn1tree.OID(a.buf[start:len(a.buf):len(a.buf)])
}
