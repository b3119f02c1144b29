package spmi

import (
	"cmp"
	"slices"
	"strings"

	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
)

// Blocks. A context of a large supplier holds hundreds or thousands of
// statistics described once for all its instances (a Block). Added with
// LiveBlock,
// they cost the tree no node each: the context points at the shared
// descriptions and at its fields in the live source, the view computes
// their OIDs, and a node is made only when one is asked for by name or
// walked (Child, EachChild, Walk), so that a million statistics cost tens
// of bytes each rather than the ~700 of a node with its path, OIDs and
// view entries.

// statBlock is one context's block: its statistics are fields
// first, first+1, ... of src, described by blk.
type statBlock struct {
	blk   *Block
	src   LiveSource
	first uint32
}

// Block is a checked, immutable slice of statistic descriptions with its
// index by name, made once (when a supplier registers a context or a
// template) and shared by every context that has these statistics, in
// every snapshot.
type Block struct {
	ds     []spmiwire.StatDesc // by ASN number
	byName []int32             // indexes of ds in name order
}

// NewBlock checks ds (valid descriptions, strictly ascending ASN
// numbers, names each once) and indexes it. ds is kept, not copied: the
// caller must not change it.
func NewBlock(ds []spmiwire.StatDesc) (*Block, error) {
	blk := &Block{ds: ds, byName: make([]int32, len(ds))}
	for i := range ds {
		if err := ds[i].Validate(); err != nil {
			return nil, err
		}
		if i > 0 && ds[i].ASN <= ds[i-1].ASN {
			return nil, spmierr.Errorf(spmierr.SiBadArgument, "statistic %q: ASN.1 number %d does not follow %q's %d (a block is sorted by number, each once)", ds[i].Name, ds[i].ASN, ds[i-1].Name, ds[i-1].ASN)
		}
		blk.byName[i] = int32(i)
	}
	slices.SortFunc(blk.byName, func(x, y int32) int { return strings.Compare(ds[x].Name, ds[y].Name) })
	for i := 1; i < len(blk.byName); i++ {
		if ds[blk.byName[i]].Name == ds[blk.byName[i-1]].Name {
			return nil, spmierr.Errorf(spmierr.SiDuplicate, "statistic %q is in the block twice", ds[blk.byName[i]].Name)
		}
	}
	return blk, nil
}

// Len is the number of statistics.
func (blk *Block) Len() int { return len(blk.ds) }

// At is the description of statistic j (by ASN order).
func (blk *Block) At(j int) *spmiwire.StatDesc { return &blk.ds[j] }

// LiveBlock adds the statistics of blk to context cx, read at answer time
// as fields first, first+1, ... of src (in blk's order). A context has
// at most one block.
func (b *Builder) LiveBlock(cx *Node, blk *Block, src LiveSource, first uint32) error {
	switch {
	case src == nil:
		return spmierr.Errorf(spmierr.SiBadArgument, "statistics of %q: no live source", displayPath(cx))
	case cx == nil || cx == b.top:
		return spmierr.Errorf(spmierr.SiBadArgument, "statistics cannot be added to Top")
	case cx.IsStat():
		return spmierr.Errorf(spmierr.SiBadArgument, "statistics of %q: it is a statistic", cx.Path)
	case cx.block != nil:
		return spmierr.Errorf(spmierr.SiDuplicate, "context %q already has a block of statistics", displayPath(cx))
	case blk == nil || blk.Len() == 0:
		return nil
	case uint64(first)+uint64(blk.Len()) > 1<<32:
		return spmierr.Errorf(spmierr.SiBadArgument, "statistics of %q: fields %d to %d overflow", displayPath(cx), first, uint64(first)+uint64(blk.Len()))
	}
	for _, c := range cx.Children {
		if blk.Index(c.Name) >= 0 || blk.IndexASN(c.ASN) >= 0 {
			return spmierr.Errorf(spmierr.SiDuplicate, "statistics of %q: %q (ASN.1 number %d) clashes with a statistic of the block", displayPath(cx), c.Name, c.ASN)
		}
	}
	cx.block = &statBlock{blk: blk, src: src, first: first}
	b.nstats += blk.Len()
	return nil
}

// Index is the position of the statistic named name, or -1.
func (blk *Block) Index(name string) int {
	i, ok := slices.BinarySearchFunc(blk.byName, name, func(k int32, name string) int { return strings.Compare(blk.ds[k].Name, name) })
	if !ok {
		return -1
	}
	return int(blk.byName[i])
}

// IndexASN is the position of the statistic numbered asn, or -1.
func (blk *Block) IndexASN(asn uint32) int {
	i, ok := slices.BinarySearchFunc(blk.ds, asn, func(d spmiwire.StatDesc, asn uint32) int { return cmp.Compare(d.ASN, asn) })
	if !ok {
		return -1
	}
	return i
}

// blockStat makes the node of statistic j of n's block: a new one at each
// call, which nobody else holds.
func (n *Node) blockStat(j int) *Node {
	bl := n.block
	d := &bl.blk.ds[j]
	return &Node{Name: d.Name, Descr: d.Descr, ASN: d.ASN, Parent: n, Path: n.Path + d.Name,
		Rel: n.Rel.Append(d.ASN), Stat: d, Provider: n.Provider, live: bl.src, field: bl.first + uint32(j)}
}

func (n *Node) blockByName(name string) *Node {
	if n.block == nil {
		return nil
	}
	return n.blockAt(n.block.blk.Index(name))
}

func (n *Node) blockByASN(asn uint32) *Node {
	if n.block == nil {
		return nil
	}
	return n.blockAt(n.block.blk.IndexASN(asn))
}

// blockAt is blockStat(j), nil for a miss (-1).
func (n *Node) blockAt(j int) *Node {
	if j < 0 {
		return nil
	}
	return n.blockStat(j)
}

// EachChild visits n's children in ASN order, the statistics of its block
// among them (each a node made for the call), until fn returns false.
func (n *Node) EachChild(fn func(*Node) bool) bool {
	var ds []spmiwire.StatDesc
	if n.block != nil {
		ds = n.block.blk.ds
	}
	j := 0
	for _, c := range n.Children {
		for ; j < len(ds) && ds[j].ASN < c.ASN; j++ {
			if !fn(n.blockStat(j)) {
				return false
			}
		}
		if !fn(c) {
			return false
		}
	}
	for ; j < len(ds); j++ {
		if !fn(n.blockStat(j)) {
			return false
		}
	}
	return true
}

// NumChildren is the number of n's children, its block's statistics
// included.
func (n *Node) NumChildren() int {
	if n.block == nil {
		return len(n.Children)
	}
	return len(n.Children) + n.block.blk.Len()
}

// Block is the block of statistics of context n (LiveBlock), nil when it
// has none: a reader of the descriptions (the directory) need not make a
// node for each.
func (n *Node) Block() *Block {
	if n.block == nil {
		return nil
	}
	return n.block.blk
}
