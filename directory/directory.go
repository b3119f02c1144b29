// Package directory serves the tree's description over SNMP, as PCP's
// pmns lets a client list and describe every metric: one row per
// statistic name and one per context, with the instances folded
// ("Disk/*/busy"), a generation that increases whenever a folded context
// or statistic appears or vanishes (a DDS supplier registers or leaves),
// and the table of the last changes. Instances coming and going
// (processes) change the rows' instance counts, not the generation.
//
// The directory is a part of its own (a StableProvider) whose shape is
// the layout of the rest of the tree (spmi.Snapshot.Layout) and the
// changes recorded: its rows are rebuilt, from the snapshot last
// published, only when one of them changed; reads cost what any other
// read does. The generation is driven by the changes (changes.go) and
// kept across restarts (store.go).
package directory

import (
	"hash/maphash"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/mib/schema"
	"github.com/perfagent/subagent/spmi"
)

// Name is the directory's top-level context.
const Name = "Directory"

// Change is a new generation: the folded contexts (or, when none
// changed, statistics) that appeared and vanished since the one before.
type Change struct {
	Generation uint32
	Time       time.Time
	Added      []string
	Removed    []string
}

var (
	dirCx   = spmi.CxDesc{Name: Name, Descr: "The tree described: statistics and contexts, instances folded", ASN: spmi.ASNDirectory}
	statCx  = spmi.CxDesc{Name: "stat", Descr: "One row per statistic name (instances folded to *)", ASN: 20, Inst: ddswire.SiContInst, DescrStat: "path"}
	statTpl = spmi.CxDesc{Descr: "Statistic"}
	ctxCx   = spmi.CxDesc{Name: "context", Descr: "One row per context (instances folded to *)", ASN: 21, Inst: ddswire.SiContInst, DescrStat: "path"}
	ctxTpl  = spmi.CxDesc{Descr: "Context"}

	dirStats = []spmiwire.StatDesc{
		{Name: "generation", Descr: "Increases when a (folded) context or statistic comes or goes", ASN: 1, Max: 100, Val: ddswire.SiQuantity},
		{Name: "contexts", Descr: "Rows of the context table", ASN: 2, Max: 1000, Val: ddswire.SiQuantity, Units: "contexts"},
		{Name: "stats", Descr: "Rows of the statistic table", ASN: 3, Max: 1000, Val: ddswire.SiQuantity, Units: "statistics"},
		{Name: "changed", Descr: "When the generation last changed", ASN: 4, Max: 1 << 31, Val: ddswire.SiQuantity, Units: "seconds since 1970", Form: spmiwire.FormTime},
		{Name: "omitted", Descr: "Rows left out: beyond MaxRows statistics or contexts", ASN: 5, Max: 10, Val: ddswire.SiQuantity, Units: "rows"},
		{Name: "changes", Descr: "Paths that appeared or vanished since the start", ASN: 6, Max: 100, Val: ddswire.SiCounter, Units: "changes"},
	}
	chgCx    = spmi.CxDesc{Name: "change", Descr: "The last paths that appeared or vanished, oldest first", ASN: 22, Inst: ddswire.SiContInst}
	chgTpl   = spmi.CxDesc{Descr: "Change"}
	chgStats = []spmiwire.StatDesc{
		{Name: "generation", Descr: "The generation the change made", ASN: 1, Max: 100, Val: ddswire.SiQuantity},
		{Name: "time", Descr: "When it changed", ASN: 2, Max: 1 << 31, Val: ddswire.SiQuantity, Units: "seconds since 1970", Form: spmiwire.FormTime},
		{Name: "op", Descr: "+ appeared, - vanished", ASN: 3, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "path", Descr: "SPMI path, instances folded to *", ASN: 4, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
	}
	statStats = []spmiwire.StatDesc{
		{Name: "path", Descr: "SPMI path, instances folded to *", ASN: 1, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "descr", Descr: "Description", ASN: 2, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "type", Descr: "SPMI type: counter or quantity; long, float or text", ASN: 3, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "syntax", Descr: "SNMP syntax it is served with", ASN: 4, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "units", Descr: "Units", ASN: 5, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "scale", Descr: "Decimal places on the wire (the value times 10^scale)", ASN: 6, Max: 9, Val: ddswire.SiQuantity},
		{Name: "scalar", Descr: "Scalar OID (the guide's mapping), * for instance numbers", ASN: 7, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "column", Descr: "Column OID in the table view (cell: column.index); or empty", ASN: 8, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
	}
	ctxStats = []spmiwire.StatDesc{
		{Name: "path", Descr: "SPMI path, instances folded to *", ASN: 1, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "descr", Descr: "Description", ASN: 2, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "instantiable", Descr: "Whether its subcontexts are instances", ASN: 3, Max: 1, Val: ddswire.SiQuantity, Form: spmiwire.FormBool},
		{Name: "instances", Descr: "Instances under it now (summed over its folded paths)", ASN: 4, Max: 100, Val: ddswire.SiQuantity, Units: "instances"},
		{Name: "oid", Descr: "Its OID, * for each instance number", ASN: 5, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "rows", Descr: "Entry OID of the table of its instances; or empty", ASN: 6, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
	}
)

type statRow struct {
	path, descr, typ, syntax, units, scalar, column string
	scale                                           uint8
}

type ctxRow struct {
	path, descr, oid, entry string
	inst                    bool
	instances               uint64
}

// built is one directory, immutable once made.
type built struct {
	stats   []statRow
	ctxs    []ctxRow
	omitted uint64 // rows beyond MaxRows, of either table
}

// MaxRows bounds each table of the directory, and what it keeps of each
// part, so that a supplier of 100,000 statistic names costs the daemon a
// few megabytes, not a row each: rows beyond it (in path order) are left
// out and counted (Directory/omitted).
const MaxRows = 4096

// Directory describes the snapshots of a hierarchy.
type Directory struct {
	current  func() *spmi.Snapshot
	onChange func(Change)

	mu      sync.Mutex
	layout  uint64
	have    bool               // a directory was built from a snapshot
	cache   map[string]*folded // by top-level context; used by update only
	dir     *built
	gen     uint32
	changed time.Time
	now     func() time.Time
	parts   map[string]partState // what the generation saw, by top-level context
	sourced map[string]bool      // parts whose source reports their changes (Source)
	changes []changeRow          // the last MaxChanges, oldest first
	seq     uint32               // rows ever recorded
	store   *store               // nil: the generation starts at 0
	look    chan struct{}        // Look: Watch looks at the tree
}

// New describes the snapshots current returns (the hierarchy's last
// published one); onChange (nil: none) is told of each new generation
// after the first, in order, from the source or collection that found it:
// it must not block nor call d.
func New(current func() *spmi.Snapshot, onChange func(Change)) *Directory {
	if onChange == nil {
		onChange = func(Change) {}
	}
	return &Directory{current: current, onChange: onChange, dir: &built{}, cache: map[string]*folded{}, now: time.Now,
		parts: map[string]partState{}, sourced: map[string]bool{}, look: make(chan struct{}, 1)}
}

// Keep keeps the generation in file (StoreFile in the state directory):
// it goes on above the last generation of the previous run. onErr is told
// of a write that failed. Call it before the first change.
func (d *Directory) Keep(file string, onErr func(error)) error {
	st, err := loadStore(file, onErr)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.store, d.gen = st, max(d.gen, st.durable)
	return nil
}

// Flush waits for the generation's file to be written, if a write is
// under way (a stop, a test).
func (d *Directory) Flush() {
	d.mu.Lock()
	st := d.store
	d.mu.Unlock()
	if st != nil {
		st.flush()
	}
}

// Generation is the directory's generation (0 before the first).
func (d *Directory) Generation() uint32 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.gen
}

// Provider serves d.
func (d *Directory) Provider() spmi.Provider { return provider{d} }

type provider struct{ d *Directory }

func (p provider) Name() string { return Name }

type shape struct {
	layout uint64
	seq    uint32
}

// Shape is the layout of the tree without the directory, and the last
// change recorded.
func (p provider) Shape() any {
	var sh shape
	if s := p.d.current(); s != nil {
		sh.layout = s.Layout(Name)
	}
	p.d.mu.Lock()
	sh.seq = p.d.seq
	p.d.mu.Unlock()
	return sh
}

// genSource serves the generation, its time and the changes counted when
// they are read: a change reported by its source is seen before the
// directory's rows are rebuilt.
type genSource struct{ d *Directory }

func (s genSource) Pin() spmi.LivePin {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	var when uint64
	if !s.d.changed.IsZero() {
		when = uint64(s.d.changed.Unix())
	}
	return genPin{uint64(s.d.gen), when, uint64(s.d.seq)}
}

type genPin [3]uint64

func (p genPin) Value(i uint32) spmiwire.Value { return spmiwire.Uint(p[i]) }

func (p provider) Collect(b *spmi.Builder) error {
	dir, _, _ := p.d.update()
	p.d.mu.Lock()
	changes := slices.Clone(p.d.changes)
	p.d.mu.Unlock()
	top, err := b.Context(nil, &dirCx)
	if err != nil {
		return err
	}
	// The generation, its time (fields 0 and 1 of genSource) and the
	// changes counted (2) are read when asked for.
	live := map[int]uint32{0: 0, 3: 1, 5: 2}
	vals := []spmiwire.Value{1: spmiwire.Uint(uint64(len(dir.ctxs))), 2: spmiwire.Uint(uint64(len(dir.stats))), 4: spmiwire.Uint(dir.omitted), 5: {}}
	for i := range dirStats {
		var err error
		if f, ok := live[i]; ok {
			err = b.LiveStat(top, &dirStats[i], genSource(p), f)
		} else {
			err = b.Stat(top, &dirStats[i], vals[i])
		}
		if err != nil {
			return err
		}
	}
	// The rows' statistics are blocks read from the directory (constant
	// until it is rebuilt): a node per row, none per statistic.
	st, err := b.Context(top, &statCx)
	if err != nil {
		return err
	}
	for i, r := range dir.stats {
		row, err := b.Instance(st, &statTpl, strconv.Itoa(i+1), r.path, uint32(i+1))
		if err != nil {
			return err
		}
		if err := b.LiveBlock(row, statBlock, statSource{dir}, uint32(i*len(statStats))); err != nil {
			return err
		}
	}
	cx, err := b.Context(top, &ctxCx)
	if err != nil {
		return err
	}
	for i, r := range dir.ctxs {
		row, err := b.Instance(cx, &ctxTpl, strconv.Itoa(i+1), r.path, uint32(i+1))
		if err != nil {
			return err
		}
		if err := b.LiveBlock(row, ctxBlock, ctxSource{dir}, uint32(i*len(ctxStats))); err != nil {
			return err
		}
	}
	ch, err := b.Context(top, &chgCx)
	if err != nil {
		return err
	}
	src := &chgSource{changes}
	for i, r := range changes {
		row, err := b.Instance(ch, &chgTpl, strconv.FormatUint(uint64(r.seq), 10), "", r.seq)
		if err != nil {
			return err
		}
		if err := b.LiveBlock(row, chgBlock, src, uint32(i*len(chgStats))); err != nil {
			return err
		}
	}
	return nil
}

var statBlock, ctxBlock, chgBlock = mustBlock(statStats), mustBlock(ctxStats), mustBlock(chgStats)

// chgSource serves the change rows alike (a pointer: sources are compared).
type chgSource struct{ rows []changeRow }

func (s *chgSource) Pin() spmi.LivePin { return s }

func (s *chgSource) Value(i uint32) spmiwire.Value {
	r := &s.rows[i/uint32(len(chgStats))]
	switch i % uint32(len(chgStats)) {
	case 0:
		return spmiwire.Uint(uint64(r.gen))
	case 1:
		return spmiwire.Uint(uint64(r.at.Unix()))
	case 2:
		if r.added {
			return spmiwire.Text("+")
		}
		return spmiwire.Text("-")
	}
	return spmiwire.Text(r.path)
}

func mustBlock(ds []spmiwire.StatDesc) *spmi.Block {
	b, err := spmi.NewBlock(ds)
	if err != nil {
		panic(err)
	}
	return b
}

// statSource serves the statistic rows: field i is statistic
// i%len(statStats) of row i/len(statStats).
type statSource struct{ dir *built }

func (s statSource) Pin() spmi.LivePin { return s }

func (s statSource) Value(i uint32) spmiwire.Value {
	r := &s.dir.stats[i/uint32(len(statStats))]
	switch i % uint32(len(statStats)) {
	case 0:
		return spmiwire.Text(r.path)
	case 1:
		return spmiwire.Text(r.descr)
	case 2:
		return spmiwire.Text(r.typ)
	case 3:
		return spmiwire.Text(r.syntax)
	case 4:
		return spmiwire.Text(r.units)
	case 5:
		return spmiwire.Uint(uint64(r.scale))
	case 6:
		return spmiwire.Text(r.scalar)
	}
	return spmiwire.Text(r.column)
}

// ctxSource serves the context rows alike.
type ctxSource struct{ dir *built }

func (s ctxSource) Pin() spmi.LivePin { return s }

func (s ctxSource) Value(i uint32) spmiwire.Value {
	r := &s.dir.ctxs[i/uint32(len(ctxStats))]
	switch i % uint32(len(ctxStats)) {
	case 0:
		return spmiwire.Text(r.path)
	case 1:
		return spmiwire.Text(r.descr)
	case 2:
		if r.inst {
			return spmiwire.Uint(1)
		}
		return spmiwire.Uint(0)
	case 3:
		return spmiwire.Uint(r.instances)
	case 4:
		return spmiwire.Text(r.oid)
	}
	return spmiwire.Text(r.entry)
}

// update rebuilds the directory when the tree's layout changed, and
// compares the parts that no source reports (a new generation for each
// that changed).
func (d *Directory) update() (*built, uint32, time.Time) {
	s := d.current()
	d.mu.Lock()
	defer d.mu.Unlock()
	if s == nil || d.have && s.Layout(Name) == d.layout {
		return d.dir, d.gen, d.changed
	}
	first := !d.have
	d.dir, d.layout, d.have = build(s, d.cache), s.Layout(Name), true
	if first {
		d.bump() // the first generation of this run
	}
	for name, f := range d.cache {
		if d.sourced[name] {
			continue
		}
		if st, ok := d.parts[name]; ok && st.layout == f.layout {
			continue
		}
		st := partState{layout: f.layout, ctxs: keep(slices.Collect(maps.Keys(f.ctxs))), stat: keep(slices.Collect(maps.Keys(f.stats)))}
		d.setPart(name, st, first)
	}
	for name := range d.parts {
		if _, ok := d.cache[name]; !ok && !d.sourced[name] {
			d.setPart(name, partState{}, false)
			delete(d.parts, name)
		}
	}
	return d.dir, d.gen, d.changed
}

// folded is what one top-level context makes of rows, by path.
type folded struct {
	layout  uint64
	stats   map[string]*statRow
	ctxs    map[string]*ctxRow
	omitted uint64              // rows beyond MaxRows
	over    map[uint64]struct{} // hashes of the paths left out, during the walk only
}

// build folds the snapshot's tree (without the directory) into rows
// sorted by path, walking only the top-level contexts whose part's
// layout changed since cache was made (it is updated).
func build(s *spmi.Snapshot, cache map[string]*folded) *built {
	out := &built{}
	seen := map[string]bool{}
	base := s.Base.String()
	for _, top := range s.Top.Children {
		if top.IsStat() || top.Name == Name {
			continue
		}
		seen[top.Name] = true
		l := s.PartLayout(top.Name)
		f := cache[top.Name]
		if f == nil || f.layout != l {
			f = &folded{layout: l, stats: map[string]*statRow{}, ctxs: map[string]*ctxRow{}, over: map[uint64]struct{}{}}
			f.walk(top, top.Name+"/", base+"."+strconv.FormatUint(uint64(top.ASN), 10))
			f.over = nil
			cache[top.Name] = f
		}
		out.omitted += f.omitted
		for _, r := range f.stats {
			out.stats = append(out.stats, *r)
		}
		for _, r := range f.ctxs {
			out.ctxs = append(out.ctxs, *r)
		}
	}
	for k := range cache {
		if !seen[k] {
			delete(cache, k)
		}
	}
	slices.SortFunc(out.stats, func(a, b statRow) int { return strings.Compare(a.path, b.path) })
	slices.SortFunc(out.ctxs, func(a, b ctxRow) int { return strings.Compare(a.path, b.path) })
	if n := len(out.stats); n > MaxRows {
		out.stats, out.omitted = slices.Clip(out.stats[:MaxRows]), out.omitted+uint64(n-MaxRows)
	}
	if n := len(out.ctxs); n > MaxRows {
		out.ctxs, out.omitted = slices.Clip(out.ctxs[:MaxRows]), out.omitted+uint64(n-MaxRows)
	}
	return out
}

// walk adds context n, at the folded path and OID, and what is under it;
// beyond MaxRows rows of a table, paths are only counted.
func (f *folded) walk(n *spmi.Node, path, oid string) {
	r := f.ctxs[path]
	if r == nil && !f.full(path, len(f.ctxs)) {
		r = &ctxRow{path: path, descr: descrOf(n), oid: oid, inst: n.Inst() != ddswire.SiNoInst}
		f.ctxs[path] = r
	}
	entry := n.RowEntry()
	for _, c := range n.Children {
		name, arc := c.Name, strconv.FormatUint(uint64(c.ASN), 10)
		if c.Instance {
			name, arc = "*", "*"
			if r != nil {
				r.instances++
				if r.entry == "" && c.RowEntry() != nil {
					r.entry = c.RowEntry().String()
				}
			}
		}
		if !c.IsStat() {
			f.walk(c, path+name+"/", oid+"."+arc)
			continue
		}
		f.stat(c.Stat, path, oid, entry)
	}
	// A block's statistics (a supplier's) without a node each.
	if blk := n.Block(); blk != nil {
		for j := range blk.Len() {
			f.stat(blk.At(j), path, oid, entry)
		}
	}
}

// stat adds the row of statistic d of the context at the folded path and
// OID, unless it has one.
func (f *folded) stat(d *spmiwire.StatDesc, cxPath, cxOID string, entry asn1tree.OID) {
	path := cxPath + d.Name
	if f.stats[path] == nil && !f.full(path, len(f.stats)) {
		f.stats[path] = statRowOf(d, path, cxOID+"."+strconv.FormatUint(uint64(d.ASN), 10)+".0", entry)
	}
}

// full tells whether a table holding n rows has no room for path, and
// counts path once if so (by a hash: a supplier may have 100,000 names
// beyond the bound).
func (f *folded) full(path string, n int) bool {
	if n < MaxRows {
		return false
	}
	h := maphash.String(seed, path)
	if _, ok := f.over[h]; !ok {
		f.over[h] = struct{}{}
		f.omitted++
	}
	return true
}

var seed = maphash.MakeSeed()

// descrOf is a context's description: an instance's template's.
func descrOf(n *spmi.Node) string {
	if n.Instance && n.Cx != nil && n.Cx.Descr != "" {
		return n.Cx.Descr
	}
	return n.Descr
}

func statRowOf(d *spmiwire.StatDesc, path, scalar string, entry asn1tree.OID) *statRow {
	r := &statRow{path: path, descr: d.Descr, typ: spmiwire.ValText(d.Val) + " " + d.Data.String(), syntax: schema.StatSyntax(d),
		units: d.Units, scale: d.Scale, scalar: scalar}
	if entry != nil && d.ASN <= ^uint32(0)-spmi.ColumnOffset {
		r.column = entry.Append(spmi.ColumnOffset + d.ASN).String()
	}
	return r
}
