package spmi

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
)

// Snapshot is one immutable, consistent state of the whole hierarchy: its
// nodes, their values (live statistics' are read through an Answer), and
// the view: what is served, by OID.
type Snapshot struct {
	Base asn1tree.OID
	// Time is when the values read with requests were read (the oldest of
	// their parts); contexts read apart (Config.MaxAge) may be older.
	Time     time.Time
	Top      *Node
	Failures map[string]error // sources that could not be read, by name
	NumStats int

	parts []*part          // one per group of providers
	route map[string]*part // top-level context -> its part
	spell func(string) string
	view  runs
}

// assemble makes a snapshot of the parts. A part whose top-level contexts
// clash with an earlier one's is left out and named in Failures.
func assemble(base asn1tree.OID, at time.Time, parts []*part, spell func(string) string) *Snapshot {
	s := &Snapshot{Base: base, Time: at, Failures: map[string]error{}, route: map[string]*part{}, spell: spell}
	top := &Node{Name: "Top", Descr: "Top of the data hierarchy", Cx: &CxDesc{Name: "Top"}}
	viewRuns := make([][]run, 0, len(parts))
	for _, p := range parts {
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
		s.parts = append(s.parts, p)
		viewRuns = append(viewRuns, p.runs)
	}
	slices.SortFunc(top.Children, func(a, b *Node) int { return cmp.Compare(a.ASN, b.ASN) })
	s.Top = top
	var ok bool
	if s.view, ok = mergeRuns(viewRuns...); !ok { // cannot happen with distinct top-level numbers
		panic("spmi: parts of the tree overlap")
	}
	return s
}

// clash tells why the top-level contexts of a part cannot join top.
func clash(top, add *Node) error {
	for _, c := range add.Children {
		for _, o := range top.Children {
			if o.Name == c.Name || o.ASN == c.ASN {
				return spmierr.Errorf(spmierr.SiDuplicate, "top-level context %q (ASN.1 number %d) clashes with %q (%d)", c.Name, c.ASN, o.Name, o.ASN)
			}
		}
	}
	return nil
}

// clean is path without the slashes around it, in its one spelling.
func (s *Snapshot) clean(path string) string { return spelled(s.spell, path) }

// spelled is path without the slashes around it, in its one spelling
// (Config.Spell; nil: as given).
func spelled(spell func(string) string, path string) string {
	p := spmiwire.CleanPath(path)
	if spell != nil {
		p = spell(p)
	}
	return p
}

// Lookup finds a context or statistic by path ("CPU/cpu0/idle", "Mem/Real/").
// A miss creates nothing (see Hierarchy.Create).
func (s *Snapshot) Lookup(path string) (*Node, error) {
	n, _, err := s.lookup(s.clean(path), path)
	return n, err
}

// lookup is Lookup of p, path already cleaned and spelled (a statset
// read does that once per path), with the part holding the node (nil for
// Top).
func (s *Snapshot) lookup(p, path string) (*Node, *part, error) {
	if p == "" {
		return s.Top, nil, nil
	}
	first, _, _ := strings.Cut(p, "/")
	pt := s.route[first]
	if pt == nil {
		return nil, nil, notFound(path)
	}
	if n, ok := pt.node(p); ok {
		return n, pt, nil
	}
	// Statistics are found through their context: the path index holds
	// contexts only, which keeps refreshes of large trees cheap.
	if i := strings.LastIndexByte(p, '/'); i > 0 && !strings.HasSuffix(strings.TrimSpace(path), "/") {
		if cx, ok := pt.node(p[:i]); ok {
			if n := cx.Child(p[i+1:]); n != nil && n.IsStat() {
				return n, pt, nil
			}
		}
	}
	return nil, nil, notFound(path)
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
	s.view.each(func(o asn1tree.OID, e ref) bool {
		if v := r.resolve(e); v.Kind != asn1tree.NoValue {
			out = append(out, asn1tree.Entry[asn1tree.Value]{OID: o, Val: v})
		}
		return true
	})
	t, _ := asn1tree.BuildShared(out)
	return t
}

// Walk visits n and everything below it depth first in ASN order until fn
// returns false. A block's statistics are nodes made for the walk.
func Walk(n *Node, fn func(*Node) bool) bool {
	if !fn(n) {
		return false
	}
	return n.EachChild(func(c *Node) bool { return Walk(c, fn) })
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
		return nil, spmierr.Errorf(spmierr.SiBadArgument, "%q is a statistic, not a context", path)
	}
	if cx.Inst() == ddswire.SiNoInst {
		return nil, spmierr.Errorf(spmierr.SiNotInst, "context %q has no instances", displayPath(cx))
	}
	out := make([]*Node, 0, len(cx.Children))
	// Peers share a template, so the statistic mostly sits at the same
	// index in each: one comparison per instance instead of a scan.
	k := -1
	for _, inst := range cx.Children {
		if !inst.Instance {
			continue
		}
		if inst.block != nil {
			if n := inst.blockByName(stat); n != nil {
				out = append(out, n)
				continue
			}
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

// bytesPerStat estimates what a snapshot holds per statistic (nodes,
// descriptions, the view's runs): 41.5 measured with 256 snapshots of
// TestWalkMemoryBounded's 100,000-statistic DDS-like tree (WALKMEM=
// unbounded: 1,014 MB), rounded up.
const bytesPerStat = 48

// Bytes estimates the memory the snapshot keeps alive, from its number
// of statistics: what a walk answered from it pins (asn1tree.Pinned).
// Parts it shares with other snapshots are counted in each.
func (s *Snapshot) Bytes() int64 { return int64(s.NumStats)*bytesPerStat + 4096 }

// Pinned implements asn1tree.Pinned: a walk kept on the snapshot counts
// its Bytes.
func (s *Snapshot) Pinned() (key any, bytes int64) { return s, s.Bytes() }
