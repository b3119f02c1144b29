package spmi

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

// Snapshot is one immutable, consistent state of the whole hierarchy: its
// nodes, their values (live statistics' are read through an Answer), and
// two OID indexes over the statistics.
type Snapshot struct {
	Base     asn1tree.OID
	Time     time.Time
	Top      *Node
	Failures map[string]error // sources that could not be read, by name
	NumStats int

	main  *part            // the providers collected at every refresh
	route map[string]*part // top-level context -> its stable part
	nodes runs[*Node]
	view  runs[asn1tree.Value]
}

// assemble makes a snapshot of the collected part and the stable parts.
// A stable part whose top-level contexts clash with another's is left out
// and named in Failures.
func assemble(base asn1tree.OID, now time.Time, main *part, stable []*part) *Snapshot {
	s := &Snapshot{Base: base, Time: now, Top: main.top, Failures: main.failures, NumStats: main.nstats, main: main}
	nodeRuns, viewRuns := [][]run[*Node]{main.runs.nodes}, [][]run[asn1tree.Value]{main.runs.view}
	if len(stable) == 0 {
		s.nodes, _ = mergeRuns(nodeRuns...)
		s.view, _ = mergeRuns(viewRuns...)
		return s
	}
	s.route = map[string]*part{}
	s.Failures = maps.Clone(main.failures)
	top := &Node{Name: main.top.Name, Descr: main.top.Descr, Cx: main.top.Cx, Children: slices.Clone(main.top.Children)}
	for _, p := range stable {
		if err := clash(top, p.top); err != nil {
			s.Failures[p.name] = err
			continue
		}
		top.Children = append(top.Children, p.top.Children...)
		for _, c := range p.top.Children {
			s.route[c.Name] = p
		}
		maps.Copy(s.Failures, p.failures)
		s.NumStats += p.nstats
		nodeRuns, viewRuns = append(nodeRuns, p.runs.nodes), append(viewRuns, p.runs.view)
	}
	slices.SortFunc(top.Children, func(a, b *Node) int { return cmp.Compare(a.ASN, b.ASN) })
	s.Top = top
	var ok1, ok2 bool
	s.nodes, ok1 = mergeRuns(nodeRuns...)
	s.view, ok2 = mergeRuns(viewRuns...)
	if !ok1 || !ok2 { // cannot happen with distinct top-level numbers
		panic("spmi: parts of the tree overlap")
	}
	return s
}

// clash tells why the top-level contexts of a stable part cannot join top.
func clash(top, add *Node) error {
	for _, c := range add.Children {
		for _, o := range top.Children {
			if o.Name == c.Name || o.ASN == c.ASN {
				return Errorf(SiDuplicate, "top-level context %q (ASN.1 number %d) clashes with %q (%d)", c.Name, c.ASN, o.Name, o.ASN)
			}
		}
	}
	return nil
}

// Lookup finds a context or statistic by path ("CPU/cpu0/idle", "Mem/Real/").
// A miss creates nothing (see Hierarchy.Create).
func (s *Snapshot) Lookup(path string) (*Node, error) {
	p := cleanPath(path)
	paths := s.main.paths
	if len(s.route) > 0 {
		first, _, _ := strings.Cut(p, "/")
		if sp, ok := s.route[first]; ok {
			paths = sp.paths
		}
	}
	if n, ok := paths[p]; ok {
		return n, nil
	}
	// Statistics are found through their context: the path index holds
	// contexts only, which keeps refreshes of large trees cheap.
	if i := strings.LastIndexByte(p, '/'); i > 0 && !strings.HasSuffix(strings.TrimSpace(path), "/") {
		if cx, ok := paths[p[:i]]; ok {
			if n := cx.Child(p[i+1:]); n != nil && n.IsStat() {
				return n, nil
			}
		}
	}
	return nil, notFound(path)
}

// View is what the SNMP front ends serve: every statistic that has a value,
// by full OID. Each call starts an Answer, so call it once per request.
func (s *Snapshot) View() asn1tree.View { return s.Answer() }

// ViewLen is the number of entries the view holds, live ones included.
func (s *Snapshot) ViewLen() int { return s.view.len() }

// Values copies the view, live values read now, into one index (for
// tests and tools: it costs a copy of the whole view).
func (s *Snapshot) Values() *asn1tree.Tree[asn1tree.Value] {
	r := s.Answer()
	out := make([]asn1tree.Entry[asn1tree.Value], 0, s.view.len())
	s.view.each(func(p *part, o asn1tree.OID, v asn1tree.Value) bool {
		if v = r.resolve(p, v); v.Kind != asn1tree.NoValue {
			out = append(out, asn1tree.Entry[asn1tree.Value]{OID: o, Val: v})
		}
		return true
	})
	t, _ := asn1tree.BuildShared(out)
	return t
}

// Nodes indexes every statistic, with or without a value, by full OID.
func (s *Snapshot) Nodes() NodeIndex { return NodeIndex{s.nodes} }

// NodeIndex finds statistics by full OID.
type NodeIndex struct{ rs runs[*Node] }

// Len is the number of statistics.
func (x NodeIndex) Len() int { return x.rs.len() }

// Get finds the statistic at oid.
func (x NodeIndex) Get(oid asn1tree.OID) (*Node, bool) {
	_, n, ok := x.rs.get(oid)
	return n, ok
}

// Walk visits the statistics from start (inclusive) below end (empty:
// to the last) in OID order until fn returns false.
func (x NodeIndex) Walk(start, end asn1tree.OID, fn func(asn1tree.OID, *Node) bool) {
	for include := true; ; include = false {
		_, o, n, ok := x.rs.search(start, include, end)
		if !ok || !fn(o, n) {
			return
		}
		start = o
	}
}

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
