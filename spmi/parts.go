package spmi

import (
	"slices"
	"sort"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

// A snapshot is made of parts: one per group of providers (a top-level
// context), reused until the group is read again (a StableProvider's while
// its shape does not change). Each part has its own sorted view; the snapshot serves them as
// runs (stretches of one part's view under one top-level context or one
// table class) sorted by OID. Parts own disjoint top-level contexts, so
// their runs never interleave, and a refresh that reuses a part copies
// none of its entries.
type part struct {
	name     string    // its group's: the top-level context
	g        *group    // nil for a Builder's Finish
	time     time.Time // when its values were read
	shape    any       // StableProvider.Shape when built; nil for the others
	base     asn1tree.OID
	top      *Node
	paths    map[string]*Node
	view     []ref          // in OID order
	marks    []asn1tree.OID // the OID under base of every markEvery-th entry of view
	failures map[string]error
	nstats   int
	runs     []run
	layout   uint64  // layoutOf(top)
	live     bool    // a fragment's: its values are live, as of any answer
	grafts   []*part // the fragments grafted into it (Builder.Graft)
}

// oid is the full OID of view entry k (a new slice).
func (p *part) oid(k int) asn1tree.OID {
	return p.view[k].appendOID(make(asn1tree.OID, 0, len(p.base)+8), p.base)
}

// cmp compares view entry k with o without allocating.
func (p *part) cmp(k int, o asn1tree.OID) int {
	if !o.HasPrefix(p.base) {
		return asn1tree.Compare(p.base, o)
	}
	return p.cmpRel(k, o[len(p.base):])
}

// cmpRel compares view entry k with rel, an OID under the part's base.
func (p *part) cmpRel(k int, rel asn1tree.OID) int {
	var buf [24]uint32
	return asn1tree.Compare(p.view[k].appendRel(buf[:0], len(p.base)), rel)
}

// run is the entries lo..hi-1 of one part's view, with its first and
// last OIDs.
type run struct {
	p           *part
	lo, hi      int
	first, last asn1tree.OID
}

// seek is the first entry of r at or after o (after it unless include).
func (r run) seek(o asn1tree.OID, include bool) int {
	if !o.HasPrefix(r.p.base) { // all before o, or all after
		if asn1tree.Compare(r.p.base, o) > 0 {
			return r.lo
		}
		return r.hi
	}
	after := func(c int) bool { return c > 0 || c == 0 && include }
	// The marks narrow the search to markEvery entries without reading
	// the nodes; the rest compares computed OIDs.
	rel := o[len(r.p.base):]
	lo, hi := r.lo, r.hi
	m0, m1 := (lo+markEvery-1)/markEvery, (hi+markEvery-1)/markEvery
	m := m0 + sort.Search(m1-m0, func(i int) bool { return after(asn1tree.Compare(r.p.marks[m0+i], rel)) })
	if m > m0 {
		lo = (m-1)*markEvery + 1
	}
	if m < m1 {
		hi = m * markEvery
	}
	return lo + sort.Search(hi-lo, func(i int) bool { return after(r.p.cmpRel(lo+i, rel)) })
}

// markEvery is the spacing of a part's marks: the stored OIDs (under the
// base) of every markEvery-th view entry, about a byte an entry, which a
// search goes through before the entries, whose OIDs it must compute.
const markEvery = 32

// runKey groups a part's entries: the arc under base, and for the table
// view's arcs the two after it (the class's length and its top-level
// context), which keeps each part's tables apart from the others'.
func runKey(o asn1tree.OID, base int) [3]uint32 {
	var k [3]uint32
	if len(o) <= base {
		return k
	}
	k[0] = o[base]
	if k[0] >= TablesArc && k[0] <= TablesArc+MaxTableDepth && len(o) > base+2 {
		k[1], k[2] = o[base+1], o[base+2]
	}
	return k
}

// splitRuns cuts p's view into runs, and before each of cuts (ascending);
// ok is false if its OIDs do not strictly ascend.
func splitRuns(p *part, cuts []asn1tree.OID) (out []run, ok bool) {
	var key [3]uint32
	var prev, cur asn1tree.OID
	arena := oidArena{chunk: 4096}
	p.marks = make([]asn1tree.OID, 0, (len(p.view)+markEvery-1)/markEvery)
	for i := range p.view {
		cur = p.view[i].appendOID(cur[:0], p.base)
		if i > 0 && asn1tree.Compare(prev, cur) >= 0 {
			return nil, false
		}
		if i%markEvery == 0 {
			rel := cur[len(p.base):]
			p.marks = append(p.marks, arena.add(len(rel), func(o asn1tree.OID) asn1tree.OID { return append(o, rel...) }))
		}
		k := runKey(cur, len(p.base))
		cut := false
		for len(cuts) > 0 && asn1tree.Compare(cuts[0], cur) < 0 {
			cuts, cut = cuts[1:], true
		}
		if i == 0 || k != key || cut {
			if i > 0 {
				out[len(out)-1].hi = i
			}
			out = append(out, run{p: p, lo: i})
			key = k
		}
		prev, cur = cur, prev
	}
	if len(out) > 0 {
		out[len(out)-1].hi = len(p.view)
	}
	for i := range out {
		out[i].first, out[i].last = p.oid(out[i].lo), p.oid(out[i].hi-1)
	}
	return out, true
}

// runs is a sorted list of non-overlapping runs: one index over parts.
type runs []run

// mergeRuns sorts the runs of the parts; ok is false if two overlap.
func mergeRuns(lists ...[]run) (runs, bool) {
	var all runs
	for _, l := range lists {
		all = append(all, l...)
	}
	slices.SortFunc(all, func(a, b run) int { return asn1tree.Compare(a.first, b.first) })
	for i := 1; i < len(all); i++ {
		if asn1tree.Compare(all[i-1].last, all[i].first) >= 0 {
			return nil, false
		}
	}
	return all, true
}

// find returns the index of the first run whose last OID is >= o.
func (rs runs) find(o asn1tree.OID) int {
	return sort.Search(len(rs), func(h int) bool { return asn1tree.Compare(rs[h].last, o) >= 0 })
}

// get is the entry at o and its part.
func (rs runs) get(o asn1tree.OID) (ref, *part, bool) {
	i := rs.find(o)
	if i == len(rs) {
		return ref{}, nil, false
	}
	r := rs[i]
	k := r.seek(o, true)
	if k >= r.hi || r.p.cmp(k, o) != 0 {
		return ref{}, nil, false
	}
	return r.p.view[k], r.p, true
}

// pos is an entry of the runs: entry k of run i's part's view; i is
// len(rs) past the last.
type pos struct{ i, k int }

// seek is the position of the first entry after start (at it if include).
func (rs runs) seek(start asn1tree.OID, include bool) pos {
	for i := rs.find(start); i < len(rs); i++ {
		r := rs[i]
		k := r.lo
		if asn1tree.Compare(r.first, start) <= 0 {
			k = r.seek(start, include)
		}
		if k < r.hi {
			return pos{i, k}
		}
	}
	return pos{len(rs), 0}
}

// next is the position after p.
func (rs runs) next(p pos) pos {
	switch {
	case p.k+1 < rs[p.i].hi:
		return pos{p.i, p.k + 1}
	case p.i+1 < len(rs):
		return pos{p.i + 1, rs[p.i+1].lo}
	}
	return pos{len(rs), 0}
}

func (rs runs) len() int {
	n := 0
	for _, r := range rs {
		n += r.hi - r.lo
	}
	return n
}

// each visits every entry in order until fn returns false.
func (rs runs) each(fn func(asn1tree.OID, ref) bool) {
	for _, r := range rs {
		for k := r.lo; k < r.hi; k++ {
			if !fn(r.p.oid(k), r.p.view[k]) {
				return
			}
		}
	}
}
