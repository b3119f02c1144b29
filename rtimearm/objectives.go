package rtimearm

import (
	"time"

	"github.com/perfagent/subagent/client/armring"
)

// Objectives are the service level objectives of transactions (package
// slo): the registry asks which ones each transaction has, has its
// libraries classify every good instance against their latency
// thresholds as it completes, and hands each drain's totals over.
type Objectives interface {
	// Match is the objectives of application/transaction keys; nil: none.
	Match(app, tran string) Matched
}

// Matched is the objectives of one transaction.
type Matched interface {
	// Thresholds are the latency thresholds (ns, ascending, at most
	// armring.MaxThresholds) the libraries classify its instances against.
	Thresholds() []uint64
	// Observe counts one drain's completions (Totals.Slow by threshold),
	// taken at now; called with the registry's lock held.
	Observe(now time.Time, t *armring.Totals)
}

// SetObjectives makes o the objectives (nil: none). What the libraries
// completed before is drained and counted first, then change (nil: none)
// runs, then every transaction is matched again and the thresholds are
// written into every live process's file, so no drain counts completions
// classified against other thresholds (but the instances completing while
// this runs, at most one per thread of each process).
func (r *Registry) SetObjectives(o Objectives, change func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	for _, p := range r.procs {
		p.drain(r, now)
	}
	if change != nil {
		change()
	}
	r.objs = o
	for _, a := range r.apps {
		for _, t := range a.order {
			r.matchTran(t)
		}
	}
	for _, p := range r.procs {
		for i, pt := range p.trans {
			if pt != nil {
				if pt.t.app.gone {
					r.matchTran(pt.t)
				}
				p.setThresholds(uint32(i), pt.t)
			}
		}
	}
}

// matchTran looks up t's objectives. Called with mu held.
func (r *Registry) matchTran(t *tran) {
	t.obj = nil
	if r.objs != nil {
		t.obj = r.objs.Match(t.app.key, t.key)
	}
}

// setThresholds writes t's thresholds into entry i of p's file.
func (p *proc) setThresholds(i uint32, t *tran) {
	if t.obj != nil {
		p.f.SetThresholds(i, t.obj.Thresholds())
	} else {
		p.f.SetThresholds(i, nil)
	}
}

// takeUnclassified takes, before entry i's thresholds are first written,
// what its instances completed without them (a short-lived process may
// complete all of its instances before the daemon first sees the entry)
// and classifies them by their response-time bins: a bin wholly beyond
// a threshold is slow, one wholly within it good, and in the bin holding
// the threshold the instances are slow when the take's minimum is beyond
// it, otherwise good (exact but for instances within that bin, 1/8 of the
// threshold, when the take's times straddle it).
func (p *proc) takeUnclassified(r *Registry, i uint32, t *tran) {
	if t.obj == nil || !p.f.Take(i, &r.tot) {
		return
	}
	tot := &r.tot
	for k, th := range t.obj.Thresholds() {
		tot.Slow[k] = 0
		if tot.Good == 0 {
			continue
		}
		for b, n := range tot.Bins {
			lo, hi := armring.BinBounds(b)
			if lo > th || (hi > th && tot.Min > th) {
				tot.Slow[k] += n
			}
		}
	}
	now := r.now()
	from := p.drained
	if from.IsZero() || from.After(now) {
		from = now
	}
	t.observe(tot, now, from, r.weight, r.span)
	t.obj.Observe(now, tot)
}
