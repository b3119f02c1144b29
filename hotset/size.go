package hotset

import (
	"unsafe"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/spmi"
)

// Bound is the most memory, in bytes, the engine's hotsets may hold with
// the results of their last evaluation: every peer returned (up to
// maxresp per peer set), every counter's value remembered, the exceptions
// kept. A hotset not evaluated yet counts its definition only. Callers
// that let others create hotsets budget with it: it errs on the high side
// so that a budget holds.
func (e *Engine) Bound() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	var n int64
	for _, s := range e.sets {
		n += max(s.bound, stateBytes) + strBytes(s.def.Name) + strBytes(s.def.GrandParent) + strBytes(s.def.Stat)
	}
	return n
}

// Sizes of what a state holds, for Bound. A map slot is counted twice
// over: maps grow by doubling and keep a fraction of their slots free.
const (
	stateBytes = int64(unsafe.Sizeof(state{})) + 2*48
	itemBytes  = int64(unsafe.Sizeof(Item{}))
	groupBytes = int64(unsafe.Sizeof(Group{}))
	eventBytes = int64(unsafe.Sizeof(Exception{}))
	prevBytes  = 2 * (16 + int64(unsafe.Sizeof(prevVal{})) + 8)
	lastBytes  = 2 * (16 + 24 + 8)
	// raisedBytes is a peer's slot in the raised set (Def.Rearm).
	raisedBytes = 2 * (16 + 8)
)

// boundOf is what one hotset may hold after evaluating groups.
func boundOf(d *Def, groups []group, baseLen, keep int) int64 {
	var total, worstEvent int64
	for _, g := range groups {
		var items, largest, prevs int64
		for _, n := range g.stats {
			b := peerBytes(n, baseLen)
			items += b
			largest = max(largest, b)
			if n.Stat.Val == ddswire.SiCounter {
				prevs += prevBytes + strBytes(n.Path)
			}
			if d.Rearm != 0 {
				prevs += raisedBytes + strBytes(n.Path)
			}
		}
		returned := items
		if d.MaxResp > 0 && len(g.stats) > d.MaxResp {
			returned = int64(d.MaxResp) * largest
		}
		total += groupBytes + strBytes(g.parent.Path) + prevs
		if d.Feed != FeedNone {
			total += returned
		}
		if d.Excp != ExcpNone {
			total += lastBytes + strBytes(g.parent.Path)
			worstEvent = max(worstEvent, eventBytes+returned)
		}
	}
	if d.Excp.Exceptions() {
		total += int64(keep) * worstEvent
	}
	return total
}

// peerBytes is what a returned item of peer statistic n holds: the item,
// its path and name, its OID (grown by one, so with room for as many
// again) and, for a counter, its unit "... per second".
func peerBytes(n *spmi.Node, baseLen int) int64 {
	b := itemBytes + strBytes(n.Path) + strBytes(n.Parent.Name) + 8*int64(baseLen+len(n.Rel)) + 16
	if n.Stat.Val == ddswire.SiCounter {
		b += strBytes(n.Stat.Units) + 16
	}
	return b
}

// strBytes is a string's allocation, rounded up as the allocator's size
// classes round it.
func strBytes(s string) int64 {
	if s == "" {
		return 0
	}
	return int64(len(s)) + int64(len(s))/8 + 16
}
