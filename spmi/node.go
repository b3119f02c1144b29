package spmi

import (
	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
)

// Node is a context or a statistic in a Snapshot. Nodes are immutable once
// the snapshot is published.
type Node struct {
	Name     string
	Descr    string
	ASN      uint32
	Parent   *Node
	Path     string             // "CPU/cpu0/" for a context, "CPU/cpu0/idle" for a statistic, "" for Top
	Rel      asn1tree.OID       // relative dotted-decimal identifier
	Cx       *CxDesc            // set for contexts (for instances: their template)
	Stat     *spmiwire.StatDesc // set for statistics
	Instance bool               // created by instantiation
	Value    spmiwire.Value     // statistics only
	// Children are the subcontexts and the statistics added one by one
	// (Stat, LiveStat), by ASN number. A context's block of statistics
	// (LiveBlock) has no nodes until asked for: see Child, EachChild.
	Children []*Node
	Provider string // name of the provider that added the node

	byName map[string]*Node
	byASN  map[uint32]*Node

	block *statBlock // a context's statistics added with LiveBlock
	row   *rowInfo   // a context that is a row of a table (TablesArc)
	live  LiveSource // set for a live statistic (LiveStat, LiveBlock)
	field uint32     // its field in live
	graft bool       // the root of a Fragment: finished, shared by builders
}

// IsStat reports whether the node is a statistic.
func (n *Node) IsStat() bool { return n.Stat != nil }

// Inst is the instantiability of a context node.
func (n *Node) Inst() ddswire.InstFreq {
	if n.Cx == nil || n.Instance {
		return ddswire.SiNoInst
	}
	return n.Cx.Inst
}

// Named reports whether a context's instances keep their names and
// numbers (CxDesc.Named).
func (n *Node) Named() bool { return n.Inst() != ddswire.SiNoInst && n.Cx.Named }

// Child returns the direct child with the given name.
func (n *Node) Child(name string) *Node {
	for _, c := range n.Children {
		if c.Name == name {
			return c
		}
	}
	return n.blockByName(name)
}

// FullOID is the node's OID under base: for a statistic base + Rel + .0,
// for a context base + Rel.
func (n *Node) FullOID(base asn1tree.OID) asn1tree.OID {
	o := base.Append(n.Rel...)
	if n.IsStat() {
		o = append(o, 0)
	}
	return o
}

// smallContext is the number of children below which a context finds a
// child by scanning; larger ones get maps.
const smallContext = 16

func (n *Node) childByName(name string) *Node {
	if n.byName != nil {
		if c := n.byName[name]; c != nil {
			return c
		}
		return n.blockByName(name)
	}
	return n.Child(name)
}

func (n *Node) childByASN(asn uint32) *Node {
	if n.byASN != nil {
		if c := n.byASN[asn]; c != nil {
			return c
		}
		return n.blockByASN(asn)
	}
	for _, c := range n.Children {
		if c.ASN == asn {
			return c
		}
	}
	return n.blockByASN(asn)
}

func (n *Node) indexChildren() {
	n.byName = make(map[string]*Node, 2*len(n.Children))
	n.byASN = make(map[uint32]*Node, 2*len(n.Children))
	for _, c := range n.Children {
		n.byName[c.Name] = c
		n.byASN[c.ASN] = c
	}
}
