package hotset

import (
	"sort"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

// View is what the provider serves of one hotset.
type View struct {
	Def        Def
	Result     Result
	Exceptions []Exception // oldest first
	Events     uint64
	Limit      Limit  // in force: the Def's, its zero fields the engine's
	Held       uint64 // reports the Limit held back
}

// Views returns the last results of every hotset, in definition order.
func (e *Engine) Views() []View {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]View, len(e.sets))
	for i, s := range e.sets {
		out[i] = View{Def: s.def, Result: s.res, Exceptions: append([]Exception(nil), s.excps...), Events: s.events,
			Limit: s.def.Limit.or(e.limit), Held: s.bucket.held}
	}
	return out
}

// Evaluations counts the calls of Evaluate.
func (e *Engine) Evaluations() uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.evals
}

// Tick evaluates every hotset on one fresh snapshot of h and makes the
// next read of h rebuild, so that the tree serves these results.
//
// The snapshot has fresh values (read now, waited for up to ValuesWait)
// but does not wait for the parts whose structure changed since the last
// one (a supplier registered or left): those are rebuilt apart and join
// at the next evaluation. Waiting for them made evaluation as late as
// the rebuilds: with 40 suppliers registering and leaving a second,
// 14 of 33 evaluations took over 20 ms and the longest 75 to 333 ms,
// against 0 to 3 and 13 to 60 ms without (docs/PERFORMANCE.md, "Alarm
// storm").
func (e *Engine) Tick(h *spmi.Hierarchy) []Event {
	evs := e.Evaluate(h.FreshWithin(ValuesWait))
	h.Invalidate()
	return evs
}

// ValuesWait bounds Tick's wait for the values of the snapshot it
// evaluates: past it the values read before are evaluated.
const ValuesWait = time.Minute

// order sorts descending, or ascending for a negative threshold; ties by
// path so that equal values keep a stable order.
func order(items []Item, ascending bool) {
	sort.Slice(items, func(i, j int) bool {
		a, b := items[i], items[j]
		if a.Value != b.Value {
			return (a.Value < b.Value) == ascending
		}
		return a.Path < b.Path
	})
}

// beyond returns the ordered items past the threshold: above it, or below
// its absolute value for a negative one; all of them for zero.
func beyond(sorted []Item, th int) []Item {
	n := 0
	for n < len(sorted) && qualifies(sorted[n].Value, th) {
		n++
	}
	return sorted[:n]
}

func qualifies(v float64, th int) bool {
	switch {
	case th > 0:
		return v > float64(th)
	case th < 0:
		return v < float64(-th)
	}
	return true
}

// capped copies the first maxResp items (all for 0) with their OIDs and
// served values.
func capped(items []Item, maxResp int, snap *spmi.Snapshot) []Item {
	if maxResp > 0 && len(items) > maxResp {
		items = items[:maxResp]
	}
	out := append([]Item(nil), items...)
	for i := range out {
		n := out[i].node
		out[i].OID, out[i].Served, out[i].node = ServedOID(n, snap.Base), spmi.SNMPValue(n.Stat, out[i].raw), nil
		out[i].Units = units(n.Stat)
	}
	return out
}

// ServedOID is the OID under which the snapshot serves statistic n, as
// the module names it: its table cell when the table view is served and
// n is in a row (SUBAGENT-MIB::diskBusy.3), its scalar otherwise
// (memRealPctFree.0). A peer is always in a row, so with views: tables
// its scalar, which is not served, is never used.
func ServedOID(n *spmi.Node, base asn1tree.OID) asn1tree.OID {
	if c := n.Cell(); c != nil {
		return c
	}
	return n.FullOID(base)
}

// units is the unit of a compared value: a counter's is per second.
func units(d *spmiwire.StatDesc) string {
	if d.Val != ddswire.SiCounter {
		return d.Units
	}
	if d.Units == "" {
		return "per second"
	}
	return d.Units + " per second"
}
