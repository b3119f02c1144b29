package dds

import (
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
)

// regCx is one live context under DDS.
type regCx struct {
	id          uint64 // unique in the registry: a context's last consistent values are kept by it
	path, descr string
	asn         uint32
	inst        ddswire.InstFreq
	stats       *statSet  // shared by the instances of a template; nil: none
	base        uint32    // slot offset of a volatile context, else 0
	volatile    bool      // has a slot
	owner       *supplier // nil for a shared vendor context
	users       int       // vendor context: suppliers using it
	// The names and numbers of its subcontexts, nil until it has one; its
	// statistics' are looked up in stats.
	names map[string]bool
	asns  map[uint32]bool
}

func newCx(path, descr string, asn uint32, inst ddswire.InstFreq, stats *statSet) *regCx {
	return &regCx{path: path, descr: descr, asn: asn, inst: inst, stats: stats}
}

// nameUsed reports whether a statistic or a subcontext of c is named name.
func (c *regCx) nameUsed(name string) bool { return c.names[name] || c.stats.hasName(name) }

// asnUsed reports whether a statistic or a subcontext of c is numbered asn.
func (c *regCx) asnUsed(asn uint32) bool { return c.asns[asn] || c.stats.hasASN(asn) }

func lastName(path string) string { return path[strings.LastIndexByte(path, '/')+1:] }

// cxView is the immutable published form of a context.
type cxView struct {
	id                        uint64
	path, parent, name, descr string
	asn                       uint32
	inst                      ddswire.InstFreq
	stats                     *statSet // immutable, shared: nil when none
	base                      uint32
	sup                       *supplier // nil for a vendor context
}

// registry holds the live contexts. Every change is checked in full before
// anything is applied, then published as a new view before the reply.
type registry struct {
	mu      sync.Mutex
	lim     ddswire.Limits
	maxSup  int
	maxAll  int // statistics of all suppliers together (0: no bound)
	nstats  int // statistics of the contexts registered
	share   shares
	nextID  uint64
	nextCx  uint64
	sups    map[uint64]*supplier
	cxs     map[string]*regCx // by path, vendor contexts included
	vendors map[uint32]string // vendor ASN -> path
	view    atomic.Pointer[[]cxView]
	faults  chan struct{} // Collect saw a fault: wake the watcher
	// onChange tells the hierarchy that its snapshot is out of date, so
	// the next walk after a reply sees the change.
	onChange func()
	// onTree is told the contexts that appeared and vanished (DDS/IBM/,
	// ...) at each publish, in order (the directory's generation); born
	// and died collect them in between.
	onTree     func(added, removed []string)
	born, died []string
	log        *slog.Logger
	// stale counts reads of a supplier that found no moment without an
	// open batch, so its previous consistent values were served.
	stale     atomic.Uint64
	staleWarn time.Duration // failing that long, a batch was left open: log it
	// now is the clock of stamps and reads; tests set it before serving.
	now func() time.Time
}

func newRegistry(maxSup int, lim ddswire.Limits) *registry {
	r := &registry{lim: lim, maxSup: maxSup, sups: map[uint64]*supplier{},
		cxs: map[string]*regCx{}, vendors: map[uint32]string{}, share: newShares(), faults: make(chan struct{}, 1),
		log: slog.New(slog.DiscardHandler), staleWarn: time.Second, now: time.Now}
	r.publish()
	return r
}

// onChange is called after each publish (with mu held: it must not block).
func (r *registry) setOnChange(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onChange = f
}

// setOnTree sets onTree and tells it every context now, as appeared
// (with mu held: it must not block).
func (r *registry) setOnTree(f func(added, removed []string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onTree = f
	r.born = append(r.born[:0], ddswire.Root+"/")
	for p := range r.cxs {
		r.born = append(r.born, p+"/")
	}
	r.tellTree()
}

// tellTree tells onTree what appeared and vanished since the last time:
// what each change costs, not the whole registry. Called with mu held.
func (r *registry) tellTree() {
	if r.onTree != nil && len(r.born)+len(r.died) > 0 {
		r.onTree(r.born, r.died)
	}
	r.born, r.died = r.born[:0], r.died[:0]
}

// appeared and vanished note a context for onTree. Called with mu held.
func (r *registry) appeared(path string) {
	if r.onTree != nil {
		r.born = append(r.born, path+"/")
	}
}

func (r *registry) vanished(path string) {
	if r.onTree != nil {
		r.died = append(r.died, path+"/")
	}
}

func (r *registry) all() []*supplier {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*supplier, 0, len(r.sups))
	for _, s := range r.sups {
		out = append(out, s)
	}
	return out
}

// publish rebuilds the view, parents before children. Called with mu held.
func (r *registry) publish() {
	if r.onChange != nil {
		defer r.onChange()
	}
	r.tellTree()
	v := make([]cxView, 0, len(r.cxs))
	for _, c := range r.cxs {
		v = append(v, cxView{id: c.id, path: c.path, parent: parentOf(c.path), name: lastName(c.path),
			descr: c.descr, asn: c.asn, inst: c.inst, stats: c.stats, base: c.base, sup: c.owner})
	}
	sort.Slice(v, func(i, j int) bool {
		di, dj := strings.Count(v[i].path, "/"), strings.Count(v[j].path, "/")
		if di != dj {
			return di < dj
		}
		return v[i].path < v[j].path
	})
	r.view.Store(&v)
}

// add registers sup with its Init tables: all or nothing.
func (r *registry) add(sup *supplier) (uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := sup.vendor
	// Reserved names first: a refusal names the reservation, whatever
	// else is wrong.
	if err := r.share.reservedASN(sup.peer, v); err != nil {
		return 0, err
	}
	for i := range sup.init.Contexts {
		if err := r.share.reservedPath(sup.peer, "Init", sup.init.Contexts[i].Path); err != nil {
			return 0, err
		}
	}
	if err := r.share.supRoom(sup.peer.UID); err != nil {
		return 0, err
	}
	if len(r.sups) >= r.maxSup {
		return 0, spmierr.Errorf(spmierr.SiCallocFailed, "%d suppliers registered, the daemon's limit (dds.max_suppliers)%s", len(r.sups), top(r.share.sups))
	}
	vcx := r.cxs[v.Path()]
	if vcx != nil && vcx.asn != v.ASN {
		return 0, spmierr.Errorf(spmierr.SiDuplicate, "vendor context %s exists with ASN.1 number %d, not %d", v.Path(), vcx.asn, v.ASN)
	}
	if p, ok := r.vendors[v.ASN]; ok && p != v.Path() {
		return 0, spmierr.Errorf(spmierr.SiDuplicate, "vendor ASN.1 number %d is already used by %s", v.ASN, p)
	}
	for i := range sup.init.Contexts {
		c := &sup.init.Contexts[i]
		if c.Path == v.Path() {
			continue
		}
		if _, ok := r.cxs[c.Path]; ok {
			return 0, spmierr.Errorf(spmierr.SiDuplicate, "context %s already exists", c.Path)
		}
		if vcx != nil && parentOf(c.Path) == v.Path() && vcx.asnUsed(c.ASN) {
			return 0, spmierr.Errorf(spmierr.SiDuplicate, "context %s: ASN.1 number %d is already used in %s", c.Path, c.ASN, v.Path())
		}
	}
	n := 0
	for i := range sup.init.Contexts {
		if sup.init.Contexts[i].Path != v.Path() {
			n += len(sup.init.Contexts[i].Stats)
		}
	}
	if err := r.roomFor(sup, n, "Init"); err != nil {
		return 0, err
	}
	sets, tmpls, err := statSets(sup.init)
	if err != nil {
		return 0, spmierr.Errorf(spmierr.SiBadArgument, "Init: %v", err)
	}
	// Everything checked: apply.
	if vcx == nil {
		vcx = newCx(v.Path(), v.Descr, v.ASN, ddswire.SiNoInst, nil)
		r.cxs[vcx.path], r.vendors[v.ASN] = vcx, vcx.path
		r.appeared(vcx.path)
	}
	vcx.users++
	for i := range sup.init.Contexts {
		c := &sup.init.Contexts[i]
		if c.Path == v.Path() {
			continue
		}
		r.link(newCx(c.Path, c.Descr, c.ASN, c.InstFreq, sets[i]), sup)
	}
	// Their statistics live on in their sets: the registration's copy
	// goes (its templates stay, for AddCx).
	sup.init.Contexts, sup.tmpls = nil, tmpls
	r.nextID++
	sup.id = r.nextID
	r.sups[sup.id] = sup
	r.share.addSup(sup.peer.UID, 1)
	r.publish()
	return sup.id, nil
}

// link adds c under its parent (which exists) for owner sup.
func (r *registry) link(c *regCx, sup *supplier) {
	r.nextCx++
	c.id, c.owner = r.nextCx, sup
	p := r.cxs[parentOf(c.path)]
	if p.names == nil {
		p.names, p.asns = map[string]bool{}, map[uint32]bool{}
	}
	p.names[lastName(c.path)], p.asns[c.asn] = true, true
	r.cxs[c.path] = c
	r.appeared(c.path)
	sup.ncx++
	r.nstats += c.stats.len()
	r.share.addStats(sup.peer.UID, c.stats.len())
}

// roomFor refuses sup n more statistics beyond its user's share
// (dds.max_stats_per_uid) or the bound of all suppliers together
// (dds.max_stats_all), which bounds the daemon's memory.
func (r *registry) roomFor(sup *supplier, n int, what string) error {
	if err := r.share.statsRoom(sup.peer.UID, n, what); err != nil {
		return err
	}
	if r.maxAll > 0 && r.nstats+n > r.maxAll {
		return spmierr.Errorf(spmierr.SiCallocFailed, "%s: %d more statistics would make %d from all suppliers, above the daemon's limit of %d (dds.max_stats_all)%s",
			what, n, r.nstats+n, r.maxAll, top(r.share.stats))
	}
	return nil
}

func (r *registry) unlink(c *regCx) {
	if p := r.cxs[parentOf(c.path)]; p != nil {
		delete(p.names, lastName(c.path))
		delete(p.asns, c.asn)
		if len(p.names) == 0 {
			p.names, p.asns = nil, nil // a map does not shrink
		}
	}
	delete(r.cxs, c.path)
	r.vanished(c.path)
	c.owner.ncx--
	r.nstats -= c.stats.len()
	r.share.addStats(c.owner.peer.UID, -c.stats.len())
}

// remove drops every context of sup; the vendor context goes with its
// last supplier. It is idempotent.
func (r *registry) remove(sup *supplier) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sup.gone || sup.id == 0 {
		sup.gone = true
		return
	}
	sup.gone = true
	delete(r.sups, sup.id)
	r.share.addSup(sup.peer.UID, -1)
	for _, c := range r.cxs {
		if c.owner == sup {
			r.unlink(c)
		}
	}
	if vcx := r.cxs[sup.vendor.Path()]; vcx != nil {
		if vcx.users--; vcx.users == 0 {
			delete(r.cxs, vcx.path)
			r.vanished(vcx.path)
			delete(r.vendors, vcx.asn)
		}
	}
	r.publish()
}

// addCx instantiates a volatile context and returns its slot offset.
func (r *registry) addCx(sup *supplier, m *ddswire.AddCx) (uint32, error) {
	t, err := ddswire.CheckAddCx(m, sup.init, sup.vendor)
	if err != nil {
		return 0, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if sup.gone {
		return 0, spmierr.Errorf(spmierr.SiAssumedDead, "the supplier was removed")
	}
	if err := r.share.reservedPath(sup.peer, "AddCx", m.Path); err != nil {
		return 0, err
	}
	p := r.cxs[parentOf(m.Path)]
	switch {
	case p == nil:
		return 0, spmierr.Errorf(spmierr.SiInvalidCx, "AddCx %q: parent context does not exist", m.Path)
	case p.owner != sup && p.path != sup.vendor.Path():
		return 0, badArg("AddCx %q: the parent context belongs to another supplier", m.Path)
	case p.nameUsed(lastName(m.Path)):
		return 0, spmierr.Errorf(spmierr.SiDuplicate, "AddCx %q: the name already exists in %s", m.Path, p.path)
	case p.asnUsed(m.ASN):
		return 0, spmierr.Errorf(spmierr.SiDuplicate, "AddCx %q: ASN.1 number %d is already used in %s", m.Path, m.ASN, p.path)
	case sup.ncx >= r.lim.MaxContexts:
		return 0, spmierr.Errorf(spmierr.SiCallocFailed, "AddCx %q: %d contexts, the limit", m.Path, sup.ncx)
	}
	if err := r.roomFor(sup, len(t.Stats), "AddCx "+m.Path); err != nil {
		return 0, err
	}
	off, err := r.slot(sup, m, ddswire.SlotSize(t))
	if err != nil {
		return 0, err
	}
	// A requested slot is a replay after a daemon restart: it already
	// holds this context's values, which the supplier keeps updating, so
	// it is published as it is. Any other slot is zeroed first.
	if !m.Requested() && !sup.area(func(a []byte) { err = ZeroSlot(a, off, ddswire.SlotSize(t)) }) {
		err = shmErr("the shared file is unmapped")
	}
	if err != nil {
		sup.slots.Release(off)
		sup.faulted.Store(true)
		return 0, err
	}
	c := newCx(m.Path, m.Descr, m.ASN, t.InstFreq, sup.tmpls[m.Ix])
	c.base, c.volatile = off, true
	r.link(c, sup)
	r.publish()
	return off, nil
}

// slot allocates the context's slot: where the library asks (its replay
// after a daemon restart), else first fit.
func (r *registry) slot(sup *supplier, m *ddswire.AddCx, size uint32) (uint32, error) {
	if !m.Requested() {
		return sup.slots.Alloc(size)
	}
	if err := sup.slots.AllocAt(m.Offset, size); err != nil {
		return 0, spmierr.Errorf(spmierr.CodeOf(err), "AddCx %q: %s", m.Path, err.(*spmierr.Error).Msg)
	}
	return m.Offset, nil
}

// delCx deletes the volatile context whose slot starts at off.
func (r *registry) delCx(sup *supplier, off uint32) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var c *regCx
	for _, x := range r.cxs {
		if x.owner == sup && x.volatile && x.base == off {
			c = x
			break
		}
	}
	if c == nil {
		return spmierr.Errorf(spmierr.SiNotFound, "no volatile context of this supplier has its data at offset %d", off)
	}
	for _, x := range r.cxs {
		if parentOf(x.path) == c.path {
			return badArg("DelCx %s: delete its subcontexts first", c.path)
		}
	}
	r.unlink(c)
	r.publish()
	sup.slots.Release(off)
	return nil
}
