package spmi

import (
	"slices"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
)

// Fragments. A provider read with requests may own a subtree whose
// structure changes seldom and whose values are live (the Agent
// context's Agent/expr: one context per expression, thousands). It builds
// that subtree once into a Fragment, finished and indexed like a part,
// and grafts it into each refresh's builder until its structure changes:
// a refresh then costs nothing for it, where building it again cost
// every node, number and table cell. A StableProvider does the same for
// a whole top-level context; a fragment is the same for a context below
// one.

// Fragment is one finished subtree: a context (its root) and everything
// below it, with its values live. It is immutable and may be grafted
// into any number of builders whose parent has the same path and OID.
type Fragment struct {
	root   *Node
	pt     *part  // its view, runs and paths; its time unused (live)
	parent string // the parent's path
	layout uint64 // the root's share of its part's layout (layoutOf)
	// What it was built with (Fits).
	numbering *Numbering
	views     Views
}

// Fragment builds a fragment to graft under parent (a context of b):
// build adds exactly one context under at, a copy of parent in a builder
// of its own, and the subtree below it. Its statistics must be live
// (LiveStat, LiveBlock) or constant: the fragment is served as built.
func (b *Builder) Fragment(parent *Node, build func(fb *Builder, at *Node) error) (*Fragment, error) {
	if parent == nil || parent == b.top || parent.IsStat() {
		return nil, spmierr.Errorf(spmierr.SiBadArgument, "fragment: its parent must be a context below Top")
	}
	fb := NewBuilder(b.base, b.numbering, b.now)
	fb.views, fb.provider = b.views, b.provider
	// The parent's ancestors, copied with their numbers: the fragment's
	// OIDs, paths and table classes are then those it has when grafted.
	var chain []*Node
	for n := parent; n != nil && n != b.top; n = n.Parent {
		chain = append(chain, n)
	}
	at := fb.top
	for _, n := range slices.Backward(chain) {
		c := &Node{Name: n.Name, Descr: n.Descr, ASN: n.ASN, Cx: n.Cx, Instance: n.Instance}
		if err := fb.add(at, c, "context"); err != nil {
			return nil, err
		}
		at = c
	}
	if err := build(fb, at); err != nil {
		return nil, err
	}
	if len(at.Children) != 1 || at.Children[0].IsStat() || at.block != nil {
		return nil, spmierr.Errorf(spmierr.SiBadArgument, "fragment under %q: must add one context, added %d nodes", displayPath(parent), len(at.Children))
	}
	root := at.Children[0]
	pt := fb.finishPart(nil)
	at.Children = nil // the ancestors' share, taken from the whole's
	f := &Fragment{root: root, pt: pt, parent: parent.Path, layout: pt.layout - layoutOf(fb.top),
		numbering: b.numbering, views: b.views}
	at.Children = []*Node{root}
	pt.live = true
	delete(pt.paths, "")
	for _, n := range chain {
		delete(pt.paths, spmiwire.CleanPath(n.Path))
	}
	root.graft = true
	return f, nil
}

// Graft adds f under parent, which must have the path f was built for.
// f's nodes are shared, not copied: nothing of them changes.
func (b *Builder) Graft(parent *Node, f *Fragment) error {
	switch {
	case parent == nil || f == nil:
		return spmierr.Errorf(spmierr.SiBadArgument, "graft: no parent or no fragment")
	case parent.Path != f.parent:
		return spmierr.Errorf(spmierr.SiBadArgument, "graft: fragment %q was built under %q, not %q", f.root.Name, f.parent, displayPath(parent))
	case parent.childByName(f.root.Name) != nil || parent.childByASN(f.root.ASN) != nil:
		return spmierr.Errorf(spmierr.SiDuplicate, "graft: context %q (ASN.1 number %d) already exists in %q", f.root.Name, f.root.ASN, displayPath(parent))
	}
	parent.Children = append(parent.Children, f.root)
	if parent.byName != nil {
		parent.byName[f.root.Name] = f.root
		parent.byASN[f.root.ASN] = f.root
	} else if len(parent.Children) > smallContext {
		parent.indexChildren()
	}
	b.grafts = append(b.grafts, f)
	return nil
}

// graftRuns adds the runs of p's fragments to p's own, which splitRuns cut
// where a fragment's runs begin.
func (p *part) graftRuns(gs []*Fragment) bool {
	if len(gs) == 0 {
		return true
	}
	lists := [][]run{p.runs}
	for _, f := range gs {
		lists = append(lists, f.pt.runs)
		p.nstats += f.pt.nstats
		p.grafts = append(p.grafts, f.pt)
		for k, err := range f.pt.failures {
			p.failures[k] = err
		}
	}
	all, ok := mergeRuns(lists...)
	p.runs = all
	return ok
}

// cuts are the first OIDs of the fragments' runs, in order: a run of the
// part that grafts them must end before each.
func cuts(gs []*Fragment) []asn1tree.OID {
	var out []asn1tree.OID
	for _, f := range gs {
		for _, r := range f.pt.runs {
			out = append(out, r.first)
		}
	}
	slices.SortFunc(out, asn1tree.Compare)
	return out
}

// node is the context at path p (cleaned) in the part or its fragments.
func (p *part) node(path string) (*Node, bool) {
	if n, ok := p.paths[path]; ok {
		return n, true
	}
	for _, g := range p.grafts {
		if n, ok := g.paths[path]; ok {
			return n, true
		}
	}
	return nil, false
}

// contexts visits the contexts of the part and of its fragments.
func (p *part) contexts() func(yield func(*Node) bool) {
	return func(yield func(*Node) bool) {
		for _, n := range p.paths {
			if !yield(n) {
				return
			}
		}
		for _, g := range p.grafts {
			for _, n := range g.paths {
				if !yield(n) {
					return
				}
			}
		}
	}
}

// Fits tells whether f may be grafted under parent in b: built for the
// same parent, base, numbering and views.
func (f *Fragment) Fits(b *Builder, parent *Node) bool {
	return parent != nil && parent.Path == f.parent && slices.Equal(f.pt.base, b.base) &&
		f.numbering == b.numbering && f.views == b.views
}
