package mib

import (
	"fmt"
	"strings"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

// Item is one context or statistic of the tree a module describes. It is
// the generator's neutral input: a snapshot and the daemon's peek answer
// both convert to it.
type Item struct {
	Path     string           `json:",omitempty"` // "CPU/cpu0/" for a context, "CPU/cpu0/idle" for a statistic
	Descr    string           `json:",omitempty"` // the node's description
	Rel      asn1tree.OID     `json:",omitempty"` // relative dotted-decimal identifier
	Inst     ddswire.InstFreq `json:",omitempty"` // instantiability of a context (SiNoInst for instances)
	Instance bool             `json:",omitempty"` // a context created by instantiation
	Named    bool             `json:",omitempty"` // its instances keep their names and numbers: declared
	Rows     bool             `json:",omitempty"` // its subcontexts are table rows (spmi.Node.HasRows)
	RowName  string           `json:",omitempty"` // what its rows are called (spmi.CxDesc.RowName)
	// Aggregate: a context summing the instances beside it (CPU/total),
	// declared with its statistics as scalars, never a table row.
	Aggregate bool `json:",omitempty"`
	// NameIsNumber and DescrStat: its rows' table has no name or no
	// description column (spmi.RowColumns).
	NameIsNumber bool               `json:",omitempty"`
	DescrStat    string             `json:",omitempty"`
	Stat         *spmiwire.StatDesc `json:",omitempty"`
}

// IsStat reports whether the item is a statistic.
func (it *Item) IsStat() bool { return it.Stat != nil }

// Tree is the served tree: its base and every node below Top.
type Tree struct {
	Base  asn1tree.OID
	Items []Item
}

// FromSnapshot takes the whole tree of a snapshot.
func FromSnapshot(s *spmi.Snapshot) Tree {
	t := Tree{Base: s.Base.Clone()}
	spmi.Walk(s.Top, func(n *spmi.Node) bool {
		if n == s.Top {
			return true
		}
		it := Item{
			Path: n.Path, Descr: n.Descr, Rel: n.Rel.Clone(),
			Inst: n.Inst(), Instance: n.Instance, Named: n.Named(), Stat: n.Stat,
			Rows: n.HasRows(), RowName: n.RowName(), Aggregate: n.Aggregate(),
		}
		if !n.IsStat() && n.Cx != nil {
			it.NameIsNumber, it.DescrStat = n.Cx.NameIsNumber, n.Cx.DescrStat
		}
		t.Items = append(t.Items, it)
		return true
	})
	return t
}

// FromEntries rebuilds a tree from a full peek (spmi.Peek of "", as the
// daemon's control socket answers it). The
// base is what the entries' full OIDs have in front of their relative ones.
func FromEntries(es []spmiwire.Entry) (Tree, error) {
	var t Tree
	for _, e := range es {
		rel, err := asn1tree.Parse(e.Rel)
		if err != nil {
			return Tree{}, fmt.Errorf("peek entry %q: relative id: %w", e.Path, err)
		}
		full, err := asn1tree.Parse(e.OID)
		if err != nil {
			return Tree{}, fmt.Errorf("peek entry %q: OID: %w", e.Path, err)
		}
		base, err := baseOf(full, rel, e.Stat != nil)
		if err != nil {
			return Tree{}, fmt.Errorf("peek entry %q: %w", e.Path, err)
		}
		if t.Base == nil {
			t.Base = base
		} else if !t.Base.Equal(base) {
			return Tree{}, fmt.Errorf("peek entry %q: base %s differs from %s", e.Path, base, t.Base)
		}
		it := Item{Path: e.Path, Descr: e.Descr, Rel: rel, Stat: e.Stat}
		if e.Stat == nil {
			if it.Inst, err = spmiwire.ParseInst(e.Inst); err != nil {
				return Tree{}, fmt.Errorf("peek entry %q: %w", e.Path, err)
			}
			it.Instance, it.Named, it.Rows, it.RowName, it.Aggregate = e.Instance, e.Named, e.Rows, e.RowName, e.Aggregate
			it.NameIsNumber, it.DescrStat = e.NameIsNumber, e.DescrStat
		}
		t.Items = append(t.Items, it)
	}
	if t.Base == nil {
		return Tree{}, fmt.Errorf("the daemon's tree is empty")
	}
	return t, nil
}

// baseOf strips rel (and the .0 of a statistic) from the end of full.
func baseOf(full, rel asn1tree.OID, stat bool) (asn1tree.OID, error) {
	if stat {
		if len(full) == 0 || full[len(full)-1] != 0 {
			return nil, fmt.Errorf("statistic OID %s does not end in .0", full)
		}
		full = full[:len(full)-1]
	}
	n := len(full) - len(rel)
	if n < 1 || !full[n:].Equal(rel) {
		return nil, fmt.Errorf("OID %s does not end in its relative id %s", full, rel)
	}
	return full[:n].Clone(), nil
}

// parentPath is the path of the context holding path ("" for Top) and
// the node's own name.
func parentPath(path string) (parent, name string) {
	p := strings.TrimSuffix(path, "/")
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", p
	}
	return p[:i+1], p[i+1:]
}
