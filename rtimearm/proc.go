package rtimearm

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/client/armring"
)

// proc is one connected process and its file.
type proc struct {
	id      uint64
	pid     int32
	uid     uint32
	prog    string
	f       *armring.File
	unmap   func()
	ring    *ring // its place in the limits (rings.go)
	tail    uint64
	closed  bool      // unmapped: only byID may be read
	drained time.Time // the last drain (or the registration): totals taken are since then

	apps    []*app           // by entry index; nil: refused
	trans   []*ptran         // by entry index; nil: refused
	held    map[*app]bool    // the applications this process counts as live in
	byID    map[int32]*ptran // by the process's tran_id, for correlators
	bad     [2]uint64        // last badBuf, noSlot read from the header
	appBuf  [armring.AppLen]byte
	tranBuf [armring.TranLen]byte
}

// ptran is a transaction as one process declared it.
type ptran struct {
	t       *tran
	id      int32
	types   [armring.NumFields]uint32 // this process's declarations
	dropped uint64                    // last value of the dropped counter
}

// scan copies the entries published since the last drain. Entries are
// published in index order, so the first unpublished one ends the scan.
func (p *proc) scan(r *Registry) {
	g := p.f.Geometry()
	p.scanApps(r)
	for i := uint32(len(p.trans)); i < g.Trans && p.f.TranEntry(i, &p.tranBuf); i++ {
		t, err := armring.DecodeTran(p.tranBuf[:])
		var x *ptran
		if err == nil {
			if int(t.App) >= len(p.apps) {
				p.scanApps(r) // published after the scan above, before this entry
			}
			x, err = p.tranOf(r, &t)
		}
		if err != nil {
			r.refuse(p, "transaction entry", fmt.Errorf("transaction entry %d: %w", i, err))
		} else {
			if p.byID == nil {
				p.byID = map[int32]*ptran{}
			}
			p.byID[x.id] = x
			p.takeUnclassified(r, i, x.t)
			p.setThresholds(i, x.t)
		}
		p.trans = append(p.trans, x)
	}
}

// scanApps copies the application entries published since the last scan.
func (p *proc) scanApps(r *Registry) {
	for i := uint32(len(p.apps)); i < p.f.Geometry().Apps && p.f.AppEntry(i, &p.appBuf); i++ {
		p.apps = append(p.apps, p.appAt(r, i))
	}
}

// appAt registers application entry i, already published in p.appBuf
// or read again from the file; nil when refused.
func (p *proc) appAt(r *Registry, i uint32) *app {
	a, err := armring.DecodeApp(p.appBuf[:])
	var x *app
	if err == nil {
		x, err = r.appFor(p, &a)
	}
	if err != nil {
		r.refuse(p, "application entry", fmt.Errorf("application entry %d: %w", i, err))
		p.f.SetAppVerdict(i, armring.VerdictRefused) // arm_init, arm_getid: the refusal code
		return nil
	}
	p.f.SetAppVerdict(i, armring.VerdictRegistered)
	if !p.held[x] {
		if p.held == nil {
			p.held = map[*app]bool{}
		}
		p.held[x] = true
		r.hold(x)
	}
	return x
}

func (p *proc) tranOf(r *Registry, t *armring.Tran) (*ptran, error) {
	if int(t.App) >= len(p.apps) || p.apps[t.App] == nil {
		return nil, fmt.Errorf("%q: application entry %d is not registered", t.Key, t.App)
	}
	ap := p.apps[t.App]
	if ap.gone {
		// Deleted while this process lives: its use re-creates it.
		if !p.f.AppEntry(t.App, &p.appBuf) {
			return nil, fmt.Errorf("%q: application entry %d is not published", t.Key, t.App)
		}
		if ap = p.appAt(r, t.App); ap == nil {
			p.apps[t.App] = nil
			return nil, fmt.Errorf("%q: application entry %d is refused", t.Key, t.App)
		}
		p.apps[t.App] = ap
	}
	x, err := r.tranFor(p, ap, t)
	if err != nil {
		return nil, err
	}
	return &ptran{t: x, id: t.ID, types: t.Types}, nil
}

// rebind registers transaction entry i again when its application was
// deleted: a live process that keeps posting re-creates both.
func (p *proc) rebind(r *Registry, i uint32) error {
	pt := p.trans[i]
	if !p.f.TranEntry(i, &p.tranBuf) {
		return fmt.Errorf("transaction entry %d is not published", i)
	}
	t, err := armring.DecodeTran(p.tranBuf[:])
	if err != nil {
		return fmt.Errorf("transaction entry %d: %w", i, err)
	}
	nt, err := p.tranOf(r, &t)
	if err != nil {
		return fmt.Errorf("transaction entry %d: %w", i, err)
	}
	pt.t, pt.types = nt.t, nt.types
	p.setThresholds(i, pt.t)
	return nil
}

// drain takes the process's new entries, records and totals.
func (p *proc) drain(r *Registry, now time.Time) {
	p.scan(r)
	g := p.f.Geometry()
	p.tail = p.f.Drain(p.tail, int(g.Slots), func(b []byte) {
		rec, err := armring.DecodeRecord(b)
		var pt *ptran
		if err == nil {
			pt, err = p.bound(r, rec.Tran)
		}
		if err != nil {
			r.refuse(p, "record", err)
			return
		}
		if pt.types != pt.t.types {
			rec.Mask = 0 // declared differently from the first registration: values ignored
		}
		pt.t.observeRecord(&rec, now, r.span)
		if rec.Flags&armring.FlagParent != 0 {
			pt.t.parent = r.parentName(&rec)
			r.addEdge(&rec, pt.t)
		}
	})
	from := p.drained
	if from.IsZero() || from.After(now) {
		from = now
	}
	p.drained = now
	for i, pt := range p.trans {
		if pt == nil {
			continue
		}
		if p.f.Take(uint32(i), &r.tot) {
			var err error
			if pt, err = p.bound(r, uint32(i)); err != nil {
				r.refuse(p, "totals", err)
				continue
			}
			pt.t.observe(&r.tot, now, from, r.weight, r.span)
			if pt.t.obj != nil {
				pt.t.obj.Observe(now, &r.tot)
			}
		}
		_, d := p.f.Counters(uint32(i))
		if d > pt.dropped {
			pt.t.lost += d - pt.dropped
		}
		pt.dropped = d
	}
	bad, noSlot := p.f.Errors()
	r.badBuf += delta(bad, &p.bad[0])
	r.noSlot += delta(noSlot, &p.bad[1])
}

// bound is the registered transaction of entry i, registered again when
// its application was deleted: a live process that keeps measuring
// re-creates both. An entry refused is refused for good.
func (p *proc) bound(r *Registry, i uint32) (*ptran, error) {
	if int(i) >= len(p.trans) || p.trans[i] == nil {
		return nil, fmt.Errorf("transaction entry %d is not registered", i)
	}
	if p.trans[i].t.app.gone {
		if err := p.rebind(r, i); err != nil {
			p.trans[i] = nil
			return nil, err
		}
	}
	return p.trans[i], nil
}

func delta(v uint64, last *uint64) uint64 {
	d := uint64(0)
	if v > *last {
		d = v - *last
	}
	*last = v
	return d
}

// inflight is the process's count of unfinished instances of entry i,
// clamped to what a sane process could have.
func (p *proc) inflight(i int) int64 {
	n, _ := p.f.Counters(uint32(i))
	return max(0, min(n, 1<<32))
}

// close drains what is left and counts the unfinished instances as lost:
// the process is gone and they will never complete. With free it also
// frees the file's pages (MADV_REMOVE punches them out of the memfd):
// whoever still maps the file then holds only the pages it writes itself,
// not the ring the daemon filled in for it. Not when the daemon stops:
// the libraries then count what it did not take as lost.
func (p *proc) close(r *Registry, now time.Time, free bool) {
	p.drain(r, now)
	for i, pt := range p.trans {
		if pt != nil {
			pt.t.lost += uint64(p.inflight(i))
		}
	}
	for x := range p.held {
		r.release(x, now)
	}
	p.held = nil
	p.closed = true
	if free {
		unix.Madvise(p.f.Bytes(), unix.MADV_REMOVE)
	}
	p.unmap()
}

// parentName names the parent of a correlated instance when the parent
// runs on this host under this daemon: application/transaction; otherwise
// the correlator's fields.
func (r *Registry) parentName(rec *armring.Record) string {
	_, name := r.parentOf(rec)
	return name
}

// parentOf is the parent's transaction (nil when not found here) and name.
func (r *Registry) parentOf(rec *armring.Record) (*tran, string) {
	if rec.ParentVendor == vendorID {
		for _, q := range r.byAgent[rec.ParentAgent] {
			if !q.closed {
				q.scan(r) // the parent may have registered since its last drain
			}
			if pt := q.byID[int32(rec.ParentTran)]; pt != nil {
				return pt.t, pt.t.app.key + "/" + pt.t.key
			}
		}
	}
	return nil, fmt.Sprintf("vendor %d agent %d class %d", rec.ParentVendor, rec.ParentAgent, rec.ParentTran)
}

// vendorID is the correlators' vendor id of libarm and package arm.
const vendorID = 32473
