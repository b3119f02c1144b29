package spmi

import (
	"errors"
	"slices"
	"sort"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/internal/foldlog"
)

// Builder collects the contexts and statistics of one refresh. Providers
// add their nodes to it; Finish turns it into an immutable Snapshot.
type Builder struct {
	base      asn1tree.OID
	now       time.Time
	top       *Node
	paths     map[string]*Node
	numbering *Numbering
	provider  string
	failures  map[string]error
	nstats    int
	arena     oidArena          // of the nodes' relative OIDs
	memo      map[string]shared // see Shared
	views     Views             // 0: both
	grafts    []*Fragment       // Graft
}

// SetViews chooses the views the snapshot serves (ViewBoth by default).
func (b *Builder) SetViews(v Views) { b.views = v }

// NewBuilder starts a tree under base. numbering may be nil (numbers of
// allocated instances then live only as long as the process).
func NewBuilder(base asn1tree.OID, numbering *Numbering, now time.Time) *Builder {
	if numbering == nil {
		numbering = NewNumbering("")
	}
	top := &Node{Name: "Top", Descr: "Top of the data hierarchy", Cx: &CxDesc{Name: "Top"}}
	return &Builder{
		base: base.Clone(), now: now, top: top, numbering: numbering, arena: oidArena{chunk: 4096},
		paths: map[string]*Node{"": top}, failures: map[string]error{},
	}
}

// Top is the anchor of all contexts.
func (b *Builder) Top() *Node { return b.top }

// Now is the time of this refresh.
func (b *Builder) Now() time.Time { return b.now }

// SetProvider names the provider whose nodes are added next.
func (b *Builder) SetProvider(name string) { b.provider = name }

// Lookup finds a context already added, by path.
func (b *Builder) Lookup(path string) *Node { return b.paths[spmiwire.CleanPath(path)] }

// Fail records that a source could not be read; the statistics depending on
// it are added with NoValue by their provider.
func (b *Builder) Fail(source string, err error) {
	if err != nil {
		b.failures[source] = err
	}
}

func (b *Builder) add(parent *Node, n *Node, kind string) error {
	if parent == nil {
		parent = b.top
	}
	if parent.IsStat() {
		return spmierr.Errorf(spmierr.SiBadArgument, "%s %q: parent %q is a statistic", kind, n.Name, parent.Path)
	}
	if o := parent.childByName(n.Name); o != nil {
		return spmierr.Errorf(spmierr.SiDuplicate, "%s %q already exists in context %q", kind, n.Name, displayPath(parent))
	}
	if o := parent.childByASN(n.ASN); o != nil {
		return spmierr.Errorf(spmierr.SiDuplicate, "%s %q: ASN.1 number %d of context %q is already used by %q", kind, n.Name, n.ASN, displayPath(parent), o.Name)
	}
	n.Parent = parent
	n.Rel = b.oid(parent.Rel, n.ASN)
	n.Path = parent.Path + n.Name
	n.Provider = b.provider
	parent.Children = append(parent.Children, n)
	if parent.byName != nil {
		parent.byName[n.Name] = n
		parent.byASN[n.ASN] = n
	} else if len(parent.Children) > smallContext {
		parent.indexChildren()
	}
	if !n.IsStat() {
		n.Path += "/"
		b.paths[spmiwire.CleanPath(n.Path)] = n
	}
	return nil
}

// oid appends asn to parent in the builder's arena: one allocation per
// chunk of OIDs rather than one per node.
func (b *Builder) oid(parent asn1tree.OID, asn uint32) asn1tree.OID {
	return b.arena.add(len(parent)+1, func(o asn1tree.OID) asn1tree.OID { return append(append(o, parent...), asn) })
}

func displayPath(n *Node) string {
	if n.Path == "" {
		return "Top"
	}
	return n.Path
}

// RTime returns the RTime context, which RTime/ARM and RTime/LAN add
// under: the first of them to collect creates it (they are collected
// together, in one group of the hierarchy).
func (b *Builder) RTime() (*Node, error) {
	if rt := b.Lookup(RTimeCx.Name); rt != nil {
		return rt, nil
	}
	return b.Context(nil, &RTimeCx)
}

// Context adds a permanent context under parent (nil: Top).
func (b *Builder) Context(parent *Node, d *CxDesc) (*Node, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	n := &Node{Name: d.Name, Descr: d.Descr, ASN: d.ASN, Cx: d}
	if err := b.add(parent, n, "context"); err != nil {
		return nil, err
	}
	return n, nil
}

// Instance adds an instance named name of an instantiable parent, described
// by the template d (whose Name is not used). asn is the number a rule gives
// the instance (cpuN: N+1, interfaces: ifindex, processes: PID); zero asks
// for the persisted assignment of the parent. Providers add a context's own
// statistics before its instances, so that assignments avoid them.
func (b *Builder) Instance(parent *Node, d *CxDesc, name, descr string, asn uint32) (*Node, error) {
	if parent == nil || parent.Inst() == ddswire.SiNoInst {
		p := "Top"
		if parent != nil {
			p = displayPath(parent)
		}
		return nil, spmierr.Errorf(spmierr.SiNotInst, "instance %q: context %q is not instantiable", name, p)
	}
	if descr == "" {
		descr = d.Descr
	}
	if len(descr) > spmiwire.MaxDescr {
		descr = foldlog.Cut(descr, spmiwire.MaxDescr)
	}
	if err := spmiwire.CheckName("instance", name, descr); err != nil {
		return nil, err
	}
	if asn == 0 {
		var err error
		if asn, err = b.numbering.Assign(spmiwire.CleanPath(parent.Path), name, func(k uint32) bool { return parent.childByASN(k) != nil }); err != nil {
			return nil, err
		}
	}
	n := &Node{Name: name, Descr: descr, ASN: asn, Cx: d, Instance: true}
	if err := b.add(parent, n, "instance"); err != nil {
		return nil, err
	}
	return n, nil
}

// Unnumbered tells whether err refused an instance its number
// (ErrNumberingFull, a limit of the numbering) and then records it as a
// failure of source: the provider leaves that instance out and goes on
// with the next, so only the instance that cannot be numbered is missing.
func (b *Builder) Unnumbered(source string, err error) bool {
	if !errors.Is(err, ErrNumberingFull) {
		return false
	}
	b.Fail(source, err)
	return true
}

// Stat adds a statistic with its current value to a context.
func (b *Builder) Stat(cx *Node, d *spmiwire.StatDesc, v spmiwire.Value) error {
	if err := d.Validate(); err != nil {
		return err
	}
	if cx == nil || cx == b.top {
		return spmierr.Errorf(spmierr.SiBadArgument, "statistic %q: statistics cannot be added to Top", d.Name)
	}
	n := &Node{Name: d.Name, Descr: d.Descr, ASN: d.ASN, Stat: d, Value: v}
	if err := b.add(cx, n, "statistic"); err != nil {
		return err
	}
	b.nstats++
	return nil
}

// Stats adds several statistics of one context; values[i] belongs to ds[i].
func (b *Builder) Stats(cx *Node, ds []spmiwire.StatDesc, values []spmiwire.Value) error {
	for i := range ds {
		v := spmiwire.NoValue
		if i < len(values) {
			v = values[i]
		}
		if err := b.Stat(cx, &ds[i], v); err != nil {
			return err
		}
	}
	return nil
}

// Finish orders the tree and indexes it by OID.
func (b *Builder) Finish() *Snapshot {
	p := b.finishPart(nil)
	p.time = b.now
	return assemble(b.base, b.now, []*part{p}, nil)
}

// finishPart orders the builder's tree and indexes it as one part.
func (b *Builder) finishPart(shape any) *part {
	views := b.views
	if views == 0 {
		views = ViewBoth
	}
	// Room for the table view's cells too, so that appending them copies
	// nothing (names and descriptions of rows come on top: a guess).
	room := b.nstats
	if views&ViewTables != 0 {
		room += b.nstats + b.nstats/8
	}
	view := make([]ref, 0, room)
	tables := newTableCells(b.base, 0)
	if views&ViewTables != 0 {
		tables = newTableCells(b.base, b.nstats+b.nstats/8)
	}
	// fixed, depth and index place n in the table view (see TablesArc):
	// its arcs that are not rows' numbers, the rows above it, and their
	// numbers. A row's statistics are cells of its parent's table.
	var visit func(n *Node, fixed asn1tree.OID, depth int, index asn1tree.OID, isRow bool)
	visit = func(n *Node, fixed asn1tree.OID, depth int, index asn1tree.OID, isRow bool) {
		sort.Slice(n.Children, func(i, j int) bool { return n.Children[i].ASN < n.Children[j].ASN })
		n.byName, n.byASN = nil, nil
		if isRow && views&ViewTables != 0 {
			tables.row(n, depth-1, fixed, index)
		}
		scalars := !isRow || views&ViewScalars != 0
		var ds []spmiwire.StatDesc
		if n.block != nil {
			ds = n.block.blk.ds
		}
		j := 0
		block := func(below uint64) {
			for ; j < len(ds) && uint64(ds[j].ASN) < below; j++ {
				if scalars {
					view = append(view, ref{n: n, j: int32(j)})
				}
			}
		}
		for _, c := range n.Children {
			block(uint64(c.ASN))
			if c.graft { // finished and indexed already (Fragment)
				continue
			}
			if c.IsStat() {
				if scalars && c.hasView() {
					view = append(view, ref{n: c, j: -1})
				}
				continue
			}
			if n != b.top && n.HasRows() && !c.Aggregate() {
				visit(c, fixed, depth+1, append(slices.Clip(index), c.ASN), true)
			} else {
				visit(c, append(slices.Clip(fixed), c.ASN), depth, index, false)
			}
		}
		block(1 << 32)
	}
	visit(b.top, nil, 0, nil, false)
	// The walk yields scalars in OID order, the tables come after them
	// unless a context is numbered above TablesArc.
	served := tables.appendSorted(view)
	if served == nil {
		served = mergeSorted(b.base, view, tables.sorted())
	}
	p := &part{base: b.base, shape: shape, top: b.top, paths: b.paths, view: served,
		failures: b.failures, nstats: b.nstats, layout: layoutOf(b.top)}
	for _, f := range b.grafts {
		p.layout += f.layout
	}
	var ok bool
	if p.runs, ok = splitRuns(p, cuts(b.grafts)); !ok || !p.graftRuns(b.grafts) {
		panic("spmi: tree with unique ASN numbers per parent produced a duplicate OID")
	}
	return p
}

// Aggregate reports whether a context sums the instances beside it
// (CxDesc.Aggregate): it is served as scalars in every view, never as a
// row of its parent's table.
func (n *Node) Aggregate() bool {
	return !n.IsStat() && !n.Instance && n.Cx != nil && n.Cx.Aggregate
}
