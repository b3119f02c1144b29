package asn1tree

import (
	"sync"
	"time"
)

// WalkBudget is the memory that the walks of several front ends (the
// SNMP responder and the AgentX session: refresh.walk_memory_mb) may keep
// alive together. Their Walks share it through Walks.Shared: a moment
// kept by walks of both counts once, and past the limit the oldest walk
// of either falls back to the current moment, counted in its own Walks'
// FellBack. The Walks that share a budget share its lock too, which is
// held only for their bookkeeping, never while a request is answered.
type WalkBudget struct {
	limit   int64
	mu      sync.Mutex
	pins    map[any]*pin // the moments kept, by Pinned's key
	pinned  int64        // their bytes
	members []budgeted   // the Walks counting here
}

// NewWalkBudget returns a budget of limit bytes (0: DefaultWalkBudget).
func NewWalkBudget(limit int64) *WalkBudget { return &WalkBudget{limit: limit} }

// PinnedBytes is what the walks sharing b keep alive, as their moments tell.
func (b *WalkBudget) PinnedBytes() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pinned
}

func (b *WalkBudget) max() int64 {
	if b.limit <= 0 {
		return DefaultWalkBudget
	}
	return b.limit
}

// budgeted is a Walks, whatever its peers' type. keep is the walk being
// answered, which keeps its moment. b.mu is held.
type budgeted interface {
	oldestPinned(keep any) (first time.Time, ok bool)
	fallBackOldest(keep any)
}

// pin counts at (when it tells what it keeps) for one more walk. b.mu is held.
func (b *WalkBudget) pin(at any) {
	p, ok := at.(Pinned)
	if !ok {
		return
	}
	k, n := p.Pinned()
	c := b.pins[k]
	if c == nil {
		if b.pins == nil {
			b.pins = map[any]*pin{}
		}
		c = &pin{bytes: n}
		b.pins[k] = c
		b.pinned += n
	}
	c.walks++
}

// unpin counts at for one walk less. b.mu is held.
func (b *WalkBudget) unpin(at any) {
	p, ok := at.(Pinned)
	if !ok {
		return
	}
	k, _ := p.Pinned()
	if c := b.pins[k]; c != nil {
		if c.walks--; c.walks == 0 {
			b.pinned -= c.bytes
			delete(b.pins, k)
		}
	}
}

// fit makes the oldest walks of all members, other than keep, fall back
// to the current moment while the moments exceed the limit. b.mu is held.
func (b *WalkBudget) fit(keep any) {
	for b.pinned > b.max() {
		var old budgeted
		var first time.Time
		for _, m := range b.members {
			if t, ok := m.oldestPinned(keep); ok && (old == nil || t.Before(first)) {
				old, first = m, t
			}
		}
		if old == nil {
			return
		}
		old.fallBackOldest(keep)
	}
}
