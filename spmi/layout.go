package spmi

import (
	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/spmiwire"
)

// A part's layout is a hash of its contexts and statistics with the
// instances folded (an instance counts as "*": Disk/*/busy), each node
// counted once per instance: it changes when a context or statistic
// appears or vanishes, an instance comes or goes, or a description
// changes, never with values. It lets the directory (one reader of every
// part) be rebuilt only when the tree's layout changed: computing it is
// one pass over a part's nodes when the part is built, no allocation.

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func hashString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return (h ^ 0xff) * fnvPrime // a separator: "ab","c" differs from "a","bc"
}

func hashUint(h uint64, v uint64) uint64 {
	for range 8 {
		h = (h ^ (v & 0xff)) * fnvPrime
		v >>= 8
	}
	return h
}

// mix spreads a node's hash before it is summed, so that sums of similar
// hashes do not cancel.
func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	return h ^ h>>33
}

// layoutOf is the layout of the tree under top (top itself not counted).
func layoutOf(top *Node) uint64 {
	var sum uint64
	layoutWalk(top, fnvOffset, &sum)
	return sum
}

func layoutWalk(n *Node, h uint64, sum *uint64) {
	for _, c := range n.Children {
		if c.IsStat() {
			*sum += mix(statHash(h, c.Stat))
			continue
		}
		if c.graft { // counted once, when its Fragment was made
			continue
		}
		ch := h
		if c.Instance {
			ch = hashString(ch, "*")
		} else {
			ch = hashString(ch, c.Name)
		}
		ch = hashUint(ch, uint64(c.ASN))
		if c.Cx != nil {
			ch = hashString(hashUint(ch, uint64(c.Cx.Inst)), c.Cx.Descr)
		}
		*sum += mix(ch)
		layoutWalk(c, ch, sum)
	}
	if n.block != nil {
		for j := range n.block.blk.ds {
			*sum += mix(statHash(h, &n.block.blk.ds[j]))
		}
	}
}

func statHash(h uint64, d *spmiwire.StatDesc) uint64 {
	h = hashUint(hashString(hashString(hashString(h, d.Name), d.Descr), d.Units), uint64(d.ASN))
	return hashUint(h, uint64(d.Val)|uint64(d.Data)<<8|uint64(d.Scale)<<16|uint64(d.Form)<<24)
}

// Layout is the tree's layout (see layoutOf) without the parts of the
// top-level contexts skip names (a reader's own part).
func (s *Snapshot) Layout(skip ...string) uint64 {
	var sum uint64
outer:
	for _, p := range s.parts {
		for _, k := range skip {
			if p.name == k {
				continue outer
			}
		}
		sum += mix(hashUint(hashString(fnvOffset, p.name), p.layout))
	}
	return sum
}

// RowEntry is the OID of the entry of the table that context n is a row
// of (TablesArc): a statistic s of n is its column RowEntry.(ColumnOffset+s.ASN).
// nil when n is no row (or the table view is not served).
func (n *Node) RowEntry() asn1tree.OID {
	if n.row == nil {
		return nil
	}
	return n.row.entry
}

// PartLayout is the layout of the part that holds the top-level context
// top (0 when none does): a reader that keeps what it made of each part
// redoes only the parts whose layout changed.
func (s *Snapshot) PartLayout(top string) uint64 {
	if p := s.route[top]; p != nil {
		return p.layout
	}
	return 0
}
