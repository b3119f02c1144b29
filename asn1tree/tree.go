package asn1tree

import (
	"fmt"
	"sort"
)

// Entry is one OID and what is stored under it.
type Entry[V any] struct {
	OID OID
	Val V
}

// Tree is an immutable index of entries ordered by OID. Readers share it
// freely across goroutines; a writer builds a new Tree and swaps it in, so a
// reader never waits. All lookups are binary searches and allocate nothing.
//
// The OIDs live in one contiguous arena and apart from the values, so a
// binary search touches few cache lines.
type Tree[V any] struct {
	oids   []OID // slices of arena, in order
	vals   []V
	prefix int // length of the prefix all OIDs share (the base OID, mostly)
}

// Build sorts the entries into a Tree (it reorders the slice, and copies
// the OIDs) and refuses two entries with the same OID, naming it.
func Build[V any](entries []Entry[V]) (*Tree[V], error) {
	sort.Slice(entries, func(i, j int) bool { return Compare(entries[i].OID, entries[j].OID) < 0 })
	n := 0
	for i := range entries {
		if i > 0 && Compare(entries[i-1].OID, entries[i].OID) == 0 {
			return nil, fmt.Errorf("duplicate OID %s in tree", entries[i].OID)
		}
		n += len(entries[i].OID)
	}
	arena := make([]uint32, 0, n)
	t := &Tree[V]{oids: make([]OID, len(entries)), vals: make([]V, len(entries))}
	for i := range entries {
		start := len(arena)
		arena = append(arena, entries[i].OID...)
		t.oids[i] = OID(arena[start:len(arena):len(arena)])
		t.vals[i] = entries[i].Val
	}
	t.setPrefix()
	return t, nil
}

// setPrefix records the common prefix of all OIDs: in a sorted list it is
// the common prefix of the first and the last.
func (t *Tree[V]) setPrefix() {
	if len(t.oids) == 0 {
		return
	}
	a, b := t.oids[0], t.oids[len(t.oids)-1]
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	t.prefix = n
}

// BuildShared is Build for callers that keep entries' OIDs immutable for
// the tree's life: the OIDs are not copied, so several trees may share one
// arena. The entries must already be sorted.
func BuildShared[V any](entries []Entry[V]) (*Tree[V], error) {
	t := &Tree[V]{oids: make([]OID, len(entries)), vals: make([]V, len(entries))}
	for i := range entries {
		if i > 0 && Compare(entries[i-1].OID, entries[i].OID) >= 0 {
			return nil, fmt.Errorf("OID %s out of order or duplicated in tree", entries[i].OID)
		}
		t.oids[i] = entries[i].OID
		t.vals[i] = entries[i].Val
	}
	t.setPrefix()
	return t, nil
}

// Len is the number of entries.
func (t *Tree[V]) Len() int {
	if t == nil {
		return 0
	}
	return len(t.oids)
}

// At returns the i-th entry in OID order.
func (t *Tree[V]) At(i int) (OID, V) {
	return t.oids[i], t.vals[i]
}

// Seek returns the index of the first entry at or after oid (include) or
// strictly after it (!include); Len() when there is none.
func (t *Tree[V]) Seek(oid OID, include bool) int {
	if t == nil || len(t.oids) == 0 {
		return 0
	}
	// Compare the shared prefix once; the search then compares only what
	// follows it.
	cp := t.prefix
	p := t.oids[0][:cp]
	for i := 0; i < cp && i < len(oid); i++ {
		if oid[i] != p[i] {
			if oid[i] < p[i] {
				return 0
			}
			return len(t.oids)
		}
	}
	if len(oid) < cp {
		return 0 // a proper prefix of every entry sorts before all of them
	}
	suffix := oid[cp:]
	lo, hi := 0, len(t.oids)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		c := Compare(t.oids[m][cp:], suffix)
		if c < 0 || (c == 0 && !include) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// Get returns the value stored exactly at oid.
func (t *Tree[V]) Get(oid OID) (V, bool) {
	i := t.Seek(oid, true)
	if i < t.Len() && Compare(t.oids[i], oid) == 0 {
		return t.vals[i], true
	}
	var zero V
	return zero, false
}

// GetNext returns the first entry strictly after oid.
func (t *Tree[V]) GetNext(oid OID) (OID, V, bool) {
	i := t.Seek(oid, false)
	if i < t.Len() {
		return t.oids[i], t.vals[i], true
	}
	var zero V
	return nil, zero, false
}

// Search answers one AgentX-style search range: the first entry from start
// (inclusive when include is set) that is below end; an empty end means no
// upper bound. It reports false when the range holds no entry.
func (t *Tree[V]) Search(start OID, include bool, end OID) (OID, V, bool) {
	i := t.Seek(start, include)
	if i < t.Len() && (len(end) == 0 || Compare(t.oids[i], end) < 0) {
		return t.oids[i], t.vals[i], true
	}
	var zero V
	return nil, zero, false
}

// Walk calls fn for every entry from start (inclusive) below end (empty end:
// to the last entry) in order, until fn returns false.
func (t *Tree[V]) Walk(start, end OID, fn func(OID, V) bool) {
	for i := t.Seek(start, true); i < t.Len(); i++ {
		if len(end) > 0 && Compare(t.oids[i], end) >= 0 {
			return
		}
		if !fn(t.oids[i], t.vals[i]) {
			return
		}
	}
}

// View is what an SNMP front end reads: one consistent set of typed values.
// It never holds NoValue entries. *Tree[Value] is a View.
type View interface {
	Get(oid OID) (Value, bool)
	Search(start OID, include bool, end OID) (OID, Value, bool)
}

var _ View = (*Tree[Value])(nil)
