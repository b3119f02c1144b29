package spmi

import (
	"slices"

	"github.com/perfagent/subagent/asn1tree"
)

// A snapshot is made of parts: one for the providers collected at every
// refresh, and one per StableProvider, reused while its shape does not
// change. Each part has its own sorted indexes; the snapshot serves them
// as runs (stretches of one part's index under one top-level context or
// one table class) sorted by OID. Parts own disjoint top-level contexts,
// so their runs never interleave, and a refresh that reuses a part copies
// none of its entries.
type part struct {
	name     string // the StableProvider's; "" for the collected part
	shape    any    // StableProvider.Shape when built; nil for the collected part
	top      *Node
	paths    map[string]*Node
	nodes    *asn1tree.Tree[*Node]
	view     *asn1tree.Tree[asn1tree.Value]
	live     []*Node // live statistics by index (deferred view entries)
	failures map[string]error
	nstats   int
	runs     partRuns
}

type partRuns struct {
	nodes []run[*Node]
	view  []run[asn1tree.Value]
}

// run is the entries lo..hi-1 of one part's index.
type run[V any] struct {
	p      *part
	t      *asn1tree.Tree[V]
	lo, hi int
}

func (r run[V]) first() asn1tree.OID { o, _ := r.t.At(r.lo); return o }
func (r run[V]) last() asn1tree.OID  { o, _ := r.t.At(r.hi - 1); return o }

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

func splitRuns[V any](p *part, t *asn1tree.Tree[V], base int) []run[V] {
	var out []run[V]
	var key [3]uint32
	for i := range t.Len() {
		o, _ := t.At(i)
		k := runKey(o, base)
		if i == 0 || k != key {
			if i > 0 {
				out[len(out)-1].hi = i
			}
			out = append(out, run[V]{p: p, t: t, lo: i})
			key = k
		}
	}
	if len(out) > 0 {
		out[len(out)-1].hi = t.Len()
	}
	return out
}

// runs is a sorted list of non-overlapping runs: one index over parts.
type runs[V any] []run[V]

// mergeRuns sorts the runs of the parts; ok is false if two overlap.
func mergeRuns[V any](lists ...[]run[V]) (runs[V], bool) {
	var all runs[V]
	for _, l := range lists {
		all = append(all, l...)
	}
	slices.SortFunc(all, func(a, b run[V]) int { return asn1tree.Compare(a.first(), b.first()) })
	for i := 1; i < len(all); i++ {
		if asn1tree.Compare(all[i-1].last(), all[i].first()) >= 0 {
			return nil, false
		}
	}
	return all, true
}

// find returns the index of the first run whose last OID is >= o.
func (rs runs[V]) find(o asn1tree.OID) int {
	i, j := 0, len(rs)
	for i < j {
		h := int(uint(i+j) >> 1)
		if asn1tree.Compare(rs[h].last(), o) < 0 {
			i = h + 1
		} else {
			j = h
		}
	}
	return i
}

func (rs runs[V]) get(o asn1tree.OID) (*part, V, bool) {
	var zero V
	i := rs.find(o)
	if i == len(rs) {
		return nil, zero, false
	}
	r := rs[i]
	k := r.t.Seek(o, true)
	if k < r.lo || k >= r.hi {
		return nil, zero, false
	}
	ko, v := r.t.At(k)
	if asn1tree.Compare(ko, o) != 0 {
		return nil, zero, false
	}
	return r.p, v, true
}

// search is asn1tree.Tree.Search over the runs.
func (rs runs[V]) search(start asn1tree.OID, include bool, end asn1tree.OID) (*part, asn1tree.OID, V, bool) {
	var zero V
	for i := rs.find(start); i < len(rs); i++ {
		r := rs[i]
		k := r.lo
		if asn1tree.Compare(r.first(), start) <= 0 {
			k = max(r.t.Seek(start, include), r.lo)
		}
		if k >= r.hi {
			continue
		}
		o, v := r.t.At(k)
		if len(end) > 0 && asn1tree.Compare(o, end) >= 0 {
			return nil, nil, zero, false
		}
		return r.p, o, v, true
	}
	return nil, nil, zero, false
}

func (rs runs[V]) len() int {
	n := 0
	for _, r := range rs {
		n += r.hi - r.lo
	}
	return n
}

// each visits every entry in order until fn returns false.
func (rs runs[V]) each(fn func(*part, asn1tree.OID, V) bool) {
	for _, r := range rs {
		for k := r.lo; k < r.hi; k++ {
			o, v := r.t.At(k)
			if !fn(r.p, o, v) {
				return
			}
		}
	}
}
