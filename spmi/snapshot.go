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
	return nil, Errorf(SiNotFound, "no context or statistic %q", path)
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
// all peer instances", as a hotset needs it.
func (s *Snapshot) Peers(path, stat string) ([]*Node, error) {
	cx, err := s.Lookup(path)
	if err != nil {
		return nil, err
	}
	if cx.IsStat() {
		return nil, Errorf(SiBadArgument, "%q is a statistic, not a context", path)
	}
	var out []*Node
	for _, inst := range cx.Children {
		if !inst.Instance {
			continue
		}
		if st := inst.Child(stat); st != nil && st.IsStat() {
			out = append(out, st)
		}
	}
	return out, nil
}
