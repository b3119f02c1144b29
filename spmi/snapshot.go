package spmi

import (
	"strings"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

// Snapshot is one immutable, consistent state of the whole hierarchy: its
// nodes, their values, and two OID indexes over the statistics.
type Snapshot struct {
	Base     asn1tree.OID
	Time     time.Time
	Top      *Node
	Failures map[string]error // sources that could not be read, by name
	NumStats int

	paths map[string]*Node
	nodes *asn1tree.Tree[*Node]
	view  *asn1tree.Tree[asn1tree.Value]
}

// Lookup finds a context or statistic by path ("CPU/cpu0/idle", "Mem/Real/").
// A miss creates nothing (see Hierarchy.Create).
func (s *Snapshot) Lookup(path string) (*Node, error) {
	p := cleanPath(path)
	if n, ok := s.paths[p]; ok {
		return n, nil
	}
	// Statistics are found through their context: the path index holds
	// contexts only, which keeps refreshes of large trees cheap.
	if i := strings.LastIndexByte(p, '/'); i > 0 && !strings.HasSuffix(strings.TrimSpace(path), "/") {
		if cx, ok := s.paths[p[:i]]; ok {
			if n := cx.Child(p[i+1:]); n != nil && n.IsStat() {
				return n, nil
			}
		}
	}
	return nil, notFound(path)
}

// View is what the SNMP front ends serve: every statistic that has a value,
// by full OID.
func (s *Snapshot) View() asn1tree.View { return s.view }

// Values is the same index as View, with its concrete type.
func (s *Snapshot) Values() *asn1tree.Tree[asn1tree.Value] { return s.view }

// Nodes indexes every statistic, with or without a value, by full OID.
func (s *Snapshot) Nodes() *asn1tree.Tree[*Node] { return s.nodes }

// Walk visits n and everything below it depth first in ASN order until fn
// returns false.
func Walk(n *Node, fn func(*Node) bool) bool {
	if !fn(n) {
		return false
	}
	for _, c := range n.Children {
		if !Walk(c, fn) {
			return false
		}
	}
	return true
}

// Peers returns the statistic named stat in every instance of the
// instantiable context at path, in ASN order: "the same statistic across
// all peer instances", as a hotset needs it. Instances other than the
// aggregate (CPU/total) are not peers. An instance without the statistic
// is left out.
func (s *Snapshot) Peers(path, stat string) ([]*Node, error) {
	cx, err := s.Lookup(path)
	if err != nil {
		return nil, err
	}
	if cx.IsStat() {
		return nil, Errorf(SiBadArgument, "%q is a statistic, not a context", path)
	}
	if cx.Inst() == SiNoInst {
		return nil, Errorf(SiNotInst, "context %q has no instances", displayPath(cx))
	}
	out := make([]*Node, 0, len(cx.Children))
	// Peers share a template, so the statistic mostly sits at the same
	// index in each: one comparison per instance instead of a scan.
	k := -1
	for _, inst := range cx.Children {
		if !inst.Instance {
			continue
		}
		if k < 0 || k >= len(inst.Children) || inst.Children[k].Name != stat {
			j := statIndex(inst, stat)
			if j < 0 {
				continue
			}
			k = j
		}
		out = append(out, inst.Children[k])
	}
	return out, nil
}

func statIndex(cx *Node, name string) int {
	for i, c := range cx.Children {
		if c.Name == name && c.IsStat() {
			return i
		}
	}
	return -1
}
