package spmi

import (
	"sort"
	"sync/atomic"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
)

// Live statistics. A source that keeps its values itself (a DDS
// supplier's shared memory) does not copy them at every refresh: its
// statistics are added with Builder.LiveBlock (or LiveStat, one at a
// time) and read when they are asked for, as PCP's MMV agent reads at
// fetch time. A refresh then costs nothing for them unless their
// structure changed (StableProvider).

// LiveSource reads the values of a group of live statistics (one
// supplier's). Pin takes one consistent reading of all of them.
type LiveSource interface {
	Pin() LivePin
}

// LivePin is one consistent reading of a LiveSource; Value returns the
// value of the statistic added with field i (NoValue if it has none). A
// pin that also has a Release method is told when its answer is done
// (Answer.Release), so that it can reuse what it holds.
type LivePin interface {
	Value(i uint32) spmiwire.Value
}

// LiveStat adds a statistic whose value src reads at answer time as its
// field i.
func (b *Builder) LiveStat(cx *Node, d *spmiwire.StatDesc, src LiveSource, i uint32) error {
	if src == nil {
		return spmierr.Errorf(spmierr.SiBadArgument, "statistic %q: no live source", d.Name)
	}
	if err := b.Stat(cx, d, spmiwire.NoValue); err != nil {
		return err
	}
	n := cx.Children[len(cx.Children)-1]
	n.live, n.field = src, i
	return nil
}

// IsLive reports whether the statistic's value is read at answer time.
func (n *Node) IsLive() bool { return n.live != nil }

// Answer answers from one snapshot and pins each live source the first
// time one of its statistics is read, so that the values of one source are
// consistent within everything answered through the Answer (an SNMP
// request, a consumer's get, a hotset evaluation). It is a View. An Answer
// is used by one goroutine at a time.
type Answer struct {
	s    *Snapshot
	pins []pinned
	// When the answer began (clock), the part it read last, and the
	// oldest time of the values it read (see DataTime).
	now     time.Time
	touched *part
	oldest  time.Time
	wait    time.Duration // the most it waits for readings of contexts read apart (reread)
	waited  time.Duration
	moved   atomic.Pointer[Snapshot] // the snapshot reread moved to, for Moved
	// The last entry Search returned: a walk's next Search starts from it
	// without seeking.
	last  asn1tree.OID
	at    pos
	arena oidArena // of the OIDs Search returns
}

type pinned struct {
	src LiveSource
	pin LivePin
}

// Answer starts an answer from the snapshot.
func (s *Snapshot) Answer() *Answer { return &Answer{s: s} }

// AnswerWithin is an Answer that waits at most wait in all for the
// contexts read apart that it finds too old (fresh.go), as a request
// waits for the others (Hierarchy.FreshWithin).
func (s *Snapshot) AnswerWithin(wait time.Duration) *Answer { return &Answer{s: s, wait: wait} }

// clock is when the answer began, taken the first time it is needed.
func (r *Answer) clock() time.Time {
	if r.now.IsZero() {
		r.now = time.Now()
	}
	return r.now
}

// DataTime is when the oldest values the answer has read so far were read
// from their sources (live values count as read now); zero before any.
func (r *Answer) DataTime() time.Time { return r.oldest }

// touch notes that the answer reads a value of part p.
func (r *Answer) touch(p *part) {
	if p == r.touched || p == nil {
		return
	}
	r.touched = p
	t := p.time
	if p.live || p.g != nil && p.g.stable != nil {
		t = r.clock() // a stable part's values are live
	}
	if r.oldest.IsZero() || t.Before(r.oldest) {
		r.oldest = t
	}
	if g := p.g; g != nil && g.apart() {
		g.h.readApart(g, p, r.clock())
	}
}

// Snapshot is the snapshot read.
func (r *Answer) Snapshot() *Snapshot { return r.s }

// Moved is the last snapshot the answer moved to when it waited for a
// context read apart (fresh.go), nil when it did not move; unlike
// Snapshot, it may be called while another goroutine answers.
func (r *Answer) Moved() *Snapshot { return r.moved.Load() }

// Value is the value of statistic n: its own, or for a live statistic the
// one its source's pin holds.
func (r *Answer) Value(n *Node) spmiwire.Value {
	if n.live == nil {
		return n.Value
	}
	return r.read(n.live, n.field)
}

// read is field i of src, from its pin (taken at the first read).
func (r *Answer) read(src LiveSource, i uint32) spmiwire.Value {
	for k := range r.pins {
		if r.pins[k].src == src {
			return r.pins[k].pin.Value(i)
		}
	}
	p := src.Pin()
	r.pins = append(r.pins, pinned{src, p})
	return p.Value(i)
}

// Release tells the pins that the answer is done (it has been encoded):
// the Answer must not be used after. Not calling it is safe, only slower.
func (r *Answer) Release() {
	for _, p := range r.pins {
		if rel, ok := p.pin.(interface{ Release() }); ok {
			rel.Release()
		}
	}
	r.pins = nil
}

// resolve is the value served for a view entry; NoValue when a live
// statistic has none now.
func (r *Answer) resolve(e ref) asn1tree.Value {
	switch {
	case e.col == ColName:
		return asn1tree.Str(e.n.Name)
	case e.col == ColDescr:
		return asn1tree.Str(e.n.Descr)
	case e.j >= 0:
		bl := e.n.block
		return SNMPValue(&bl.blk.ds[e.j], r.read(bl.src, bl.first+uint32(e.j)))
	}
	return SNMPValue(e.n.Stat, r.Value(e.n))
}

// Get implements asn1tree.View.
func (r *Answer) Get(oid asn1tree.OID) (asn1tree.Value, bool) {
	e, p, ok := r.s.view.get(oid)
	if !ok {
		if o := r.s.ownerOf(oid); r.missing(o) && r.reread(o) {
			e, p, ok = r.s.view.get(oid)
		}
	} else if p != r.touched && r.cold(p) && r.reread(p) {
		e, p, ok = r.s.view.get(oid)
	}
	if !ok {
		return asn1tree.Value{}, false
	}
	r.touch(p)
	v := r.resolve(e)
	return v, v.Kind != asn1tree.NoValue
}

// Search implements asn1tree.View: live statistics without a value now
// are skipped as if absent.
func (r *Answer) Search(start asn1tree.OID, include bool, end asn1tree.OID) (asn1tree.OID, asn1tree.Value, bool) {
	rs := r.s.view
	var p pos
	if !include && r.last != nil && asn1tree.Compare(start, r.last) == 0 {
		p = rs.next(r.at)
	} else {
		p = rs.seek(start, include)
	}
	for range maxSkips {
		if p.i >= len(rs) {
			return nil, asn1tree.Value{}, false
		}
		o := r.oid(p)
		if len(end) > 0 && asn1tree.Compare(o, end) >= 0 {
			return nil, asn1tree.Value{}, false
		}
		if pt := rs[p.i].p; pt != r.touched && r.cold(pt) && r.reread(pt) {
			rs = r.s.view // from start again: the new reading may have entries before o
			p = rs.seek(start, include)
			continue
		}
		r.touch(rs[p.i].p)
		if v := r.resolve(rs[p.i].p.view[p.k]); v.Kind != asn1tree.NoValue {
			r.last, r.at = o, p
			return o, v, true
		}
		p = rs.next(p)
	}
	return nil, asn1tree.Value{}, false
}

// oid is the OID of the entry at p, in the answer's arena: one allocation
// per chunk rather than per varbind. The OIDs stay valid after Release.
func (r *Answer) oid(p pos) asn1tree.OID {
	pt := r.s.view[p.i].p
	r.arena.chunk = 256
	return r.arena.add(len(pt.base)+24, func(o asn1tree.OID) asn1tree.OID { return pt.view[p.k].appendOID(o, pt.base) })
}

// maxSkips bounds the entries without a value one Search passes over (a
// supplier that faulted and is not yet removed): past it the search ends
// as if the view did, which an SNMP walk survives.
const maxSkips = 1 << 20

// Current is the statistic's value now: its own, or for a live statistic
// a reading of its source taken for this call alone (an Answer keeps
// several values of one source consistent; this does not).
func (n *Node) Current() spmiwire.Value {
	if n.live == nil {
		return n.Value
	}
	return n.live.Pin().Value(n.field)
}

// The front ends report the age of the data an answer read, and tell
// noSuchInstance from noSuchObject by the objects it serves.
var (
	_ asn1tree.DataTimer = (*Answer)(nil)
	_ asn1tree.Definer   = (*Answer)(nil)
)

// Defines implements asn1tree.Definer from the snapshot's nodes, not its
// values: name is under an object when it is under a statistic's scalar
// (base.rel, served in the configured views) or a column of a table
// (entry.column) that a row of the table has, with a value now or not.
func (r *Answer) Defines(name asn1tree.OID) bool {
	s := r.s
	if !name.HasPrefix(s.Base) {
		return false
	}
	return s.definesScalar(name[len(s.Base):]) || s.definesColumn(name)
}

// definesScalar walks rel down the contexts to a statistic.
func (s *Snapshot) definesScalar(rel asn1tree.OID) bool {
	cx := s.Top
	for _, a := range rel {
		if cx.hasStat(a) {
			// Rows' statistics are scalars only in the scalar view.
			return cx.Parent == nil || !cx.Parent.HasRows() || s.views()&ViewScalars != 0
		}
		if cx = cx.subcontext(a); cx == nil {
			return false
		}
	}
	return false
}

// definesColumn reads name as base.<TablesArc+depth>.<k>.<k fixed
// arcs>.1.<column>... and looks for a row of that table with the column.
func (s *Snapshot) definesColumn(name asn1tree.OID) bool {
	rel := name[len(s.Base):]
	if len(rel) < 2 || rel[0] < TablesArc || rel[0] > TablesArc+MaxTableDepth {
		return false
	}
	k := int(rel[1])
	if len(rel) < k+4 || rel[k+2] != 1 {
		return false
	}
	entry, col := name[:len(s.Base)+k+3], rel[k+3]
	found := false
	eachRow(s.Top, rel[2:k+2], int(rel[0]-TablesArc), func(row *Node) bool {
		if row.row != nil && asn1tree.Compare(row.row.entry, entry) == 0 {
			name, descr := row.rowColumns()
			found = col == ColName && name || col == ColDescr && descr || col >= ColumnOffset && row.hasStat(col-ColumnOffset)
		}
		return !found
	})
	return found
}

// eachRow calls fn, until it returns false, for the rows below n of the
// tables with depth rows above theirs and the fixed arcs (see TablesArc),
// as Builder places them: every subcontext of a context with rows is a
// row. It reports whether fn never returned false.
func eachRow(n *Node, fixed asn1tree.OID, depth int, fn func(*Node) bool) bool {
	if n.Parent != nil && n.HasRows() {
		if depth == 0 && len(fixed) > 0 {
			return true // rows of a table with fewer fixed arcs
		}
		for _, c := range n.Children {
			if c.IsStat() {
				continue
			}
			if depth == 0 && !fn(c) || depth > 0 && !eachRow(c, fixed, depth-1, fn) {
				return false
			}
		}
		return true
	}
	if len(fixed) == 0 {
		return true
	}
	if c := n.subcontext(fixed[0]); c != nil {
		return eachRow(c, fixed[1:], depth, fn)
	}
	return true
}

// hasStat reports whether context n has a statistic numbered asn, with a
// value or not.
func (n *Node) hasStat(asn uint32) bool {
	if c := n.childASN(asn); c != nil {
		return c.IsStat()
	}
	return n.block != nil && n.block.blk.IndexASN(asn) >= 0
}

// subcontext is n's subcontext numbered asn, nil when it has none.
func (n *Node) subcontext(asn uint32) *Node {
	if c := n.childASN(asn); c != nil && !c.IsStat() {
		return c
	}
	return nil
}

// childASN finds a child among Children, which a snapshot keeps in ASN
// order, without the maps a Builder indexes children with.
func (n *Node) childASN(asn uint32) *Node {
	cs := n.Children
	i := sort.Search(len(cs), func(i int) bool { return cs[i].ASN >= asn })
	if i < len(cs) && cs[i].ASN == asn {
		return cs[i]
	}
	return nil
}

// views are the views the snapshot serves: its hierarchy's setting. A
// Builder's own snapshot (Finish) does not keep its Builder's: both.
func (s *Snapshot) views() Views {
	for _, p := range s.parts {
		if p.g != nil && p.g.h != nil && p.g.h.cfg.Views != 0 {
			return p.g.h.cfg.Views
		}
	}
	return ViewBoth
}
