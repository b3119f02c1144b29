package agentx

import (
	"sort"
	"sync"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/snmpreq"
)

// region is one registration: the subtree, or with a range (rangeSub > 0)
// the union of the subtrees named by replacing subtree[rangeSub-1] with each
// value up to upper (RFC 2741 section 6.2.3).
type region struct {
	subtree  asn1tree.OID
	rangeSub int // 1-based; 0 for no range
	upper    uint32
}

// span is a half-open interval [start, end); a nil end means no upper bound.
type span struct {
	start, end asn1tree.OID
}

// successor returns the smallest OID after every OID that has o as prefix,
// or nil when there is none (o is all 4294967295s).
func successor(o asn1tree.OID) asn1tree.OID {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i] != ^uint32(0) {
			s := o[:i+1].Clone()
			s[i]++
			return s
		}
	}
	return nil
}

// with returns the subtree with the range sub-identifier set to v.
func (r *region) with(v uint32) asn1tree.OID {
	o := r.subtree.Clone()
	o[r.rangeSub-1] = v
	return o
}

// bounds is the smallest span holding every OID of r.
func (r *region) bounds() span {
	if r.rangeSub == 0 {
		return span{r.subtree, successor(r.subtree)}
	}
	return span{r.subtree, successor(r.with(r.upper))}
}

func (r *region) contains(o asn1tree.OID) bool {
	if len(o) < len(r.subtree) {
		return false
	}
	for i, s := range r.subtree {
		if i == r.rangeSub-1 {
			if o[i] < s || o[i] > r.upper {
				return false
			}
		} else if o[i] != s {
			return false
		}
	}
	return true
}

// nextFrom returns the first OID of r after o, which r does not contain:
// the start of the next of its subtrees, or nil when none is left.
func (r *region) nextFrom(o asn1tree.OID) asn1tree.OID {
	if asn1tree.Compare(o, r.subtree) < 0 {
		return r.subtree
	}
	if r.rangeSub == 0 {
		return nil
	}
	i := r.rangeSub - 1
	if !o.HasPrefix(r.subtree[:i]) || len(o) == i || o[i] > r.upper {
		return nil // past every subtree of the range
	}
	if t := r.with(o[i]); asn1tree.Compare(o, t) < 0 {
		return t
	}
	if o[i] == r.upper {
		return nil
	}
	return r.with(o[i] + 1)
}

// newScope builds the scope of the given registrations.
func newScope(regs []Registration) *scope {
	s := &scope{}
	for _, g := range regs {
		r := region{subtree: g.Subtree.Clone(), rangeSub: int(g.RangeSubID), upper: g.UpperBound}
		s.regions = append(s.regions, r)
		s.spans = append(s.spans, r.bounds())
	}
	s.spans = mergeSpans(s.spans)
	return s
}

// mergeSpans sorts spans and merges those that overlap or touch.
func mergeSpans(rs []span) []span {
	sort.Slice(rs, func(i, j int) bool { return asn1tree.Compare(rs[i].start, rs[j].start) < 0 })
	out := rs[:0]
	for _, r := range rs {
		if n := len(out); n > 0 && (out[n-1].end == nil || asn1tree.Compare(r.start, out[n-1].end) <= 0) {
			if out[n-1].end != nil && (r.end == nil || asn1tree.Compare(r.end, out[n-1].end) > 0) {
				out[n-1].end = r.end
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

// servable reports whether a value can go on the wire; a View should never
// hold anything else, but a bad entry must not become a malformed answer.
func servable(v asn1tree.Value) bool {
	return v.Kind > asn1tree.NoValue && v.Kind <= asn1tree.ObjectIdentifier
}

// scope is a View restricted to the registered regions, so an answer never
// leaves what we told the master we serve, even for an unbounded range.
// spans bound the regions for the search; within a span, the gaps between
// the subtrees of a range are skipped.
type scope struct {
	regions []region
	spans   []span
}

func (s *scope) contains(o asn1tree.OID) bool {
	for i := range s.regions {
		if s.regions[i].contains(o) {
			return true
		}
	}
	return false
}

// nextFrom returns the first registered OID after o, which no region
// contains, or nil.
func (s *scope) nextFrom(o asn1tree.OID) asn1tree.OID {
	var best asn1tree.OID
	for i := range s.regions {
		if n := s.regions[i].nextFrom(o); n != nil && (best == nil || asn1tree.Compare(n, best) < 0) {
			best = n
		}
	}
	return best
}

// get returns the value at o; present reports an entry even when its value
// cannot be served (NoValue: the instance exists but has no value now).
func (s *scope) get(v asn1tree.View, o asn1tree.OID) (val asn1tree.Value, present bool) {
	if v == nil || !s.contains(o) {
		return asn1tree.Value{}, false
	}
	return v.Get(o)
}

// search answers one SearchRange: the first servable entry from start
// (inclusive when include) below end (empty: unbounded) inside a region.
// Skipping from entry to entry, not from subtree to subtree, keeps a wide,
// sparse range as cheap as its entries.
func (s *scope) search(v asn1tree.View, start asn1tree.OID, include bool, end asn1tree.OID) (asn1tree.OID, asn1tree.Value, bool) {
	if v == nil {
		return nil, asn1tree.Value{}, false
	}
	for _, r := range s.spans {
		if r.end != nil && asn1tree.Compare(r.end, start) <= 0 {
			continue
		}
		lo, inc := start, include
		if asn1tree.Compare(r.start, start) > 0 {
			lo, inc = r.start, true
		}
		hi := r.end
		if len(end) > 0 && (hi == nil || asn1tree.Compare(end, hi) < 0) {
			hi = end
		}
		if hi != nil && asn1tree.Compare(lo, hi) >= 0 {
			break // lo is past the requested end; later regions are further out
		}
		for {
			o, val, ok := v.Search(lo, inc, hi)
			if c := asn1tree.Compare(o, lo); !ok || c < 0 || c == 0 && !inc {
				break // nothing here, or a View that does not advance
			}
			if !s.contains(o) {
				// Between two subtrees of a range: go on at the next one.
				next := s.nextFrom(o)
				if next == nil || hi != nil && asn1tree.Compare(next, hi) >= 0 {
					break
				}
				lo, inc = next, true
				continue
			}
			if servable(val) {
				return o, val, true
			}
			lo, inc = o, false
		}
	}
	return nil, asn1tree.Value{}, false
}

// viewCacheSize covers the SNMP requests in flight at once: the master keeps
// one transactionID per manager request across all its AgentX passes.
const (
	viewCacheSize = 32
	viewCacheTTL  = 5 * time.Second
)

// viewSlot is the moment one transaction is answered from. use is held
// by the PDU answering from it (the first one while it loads), so the
// PDUs of one transaction take turns and see one loaded view.
type viewSlot struct {
	use  sync.Mutex
	tid  uint32
	mo   snmpreq.Moment // loaded under use
	refs int            // guarded by viewCache.mu: the cache's and each PDU's
	// loaded is when the slot was made: the TTL counts from there.
	loaded time.Time
}

// viewCache hands every PDU of one transactionID the same moment. The
// session's reader and the PDUs answered apart share it.
type viewCache struct {
	mu    sync.Mutex
	slots [viewCacheSize]*viewSlot
	next  int
}

// drop takes one reference off s; the last releases its view. c.mu is held.
func (c *viewCache) drop(s *viewSlot) {
	if s.refs--; s.refs == 0 {
		s.mo.Release()
	}
}

// done ends a PDU's use of s.
func (c *viewCache) done(s *viewSlot) {
	s.use.Unlock()
	c.mu.Lock()
	c.drop(s)
	c.mu.Unlock()
}

// expire drops the views of transactions older than the TTL, so that a
// session the master has stopped querying does not keep old snapshots
// (and a tree suppliers have since left) alive.
func (c *viewCache) expire(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, s := range c.slots {
		if s != nil && now.Sub(s.loaded) >= viewCacheTTL {
			c.drop(s)
			c.slots[i] = nil
		}
	}
}

// find returns the slot of transaction tid, referenced for the caller,
// or nil when it has none.
func (c *viewCache) find(tid uint32, now time.Time) *viewSlot {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.slots {
		if s != nil && s.tid == tid && now.Sub(s.loaded) < viewCacheTTL {
			s.refs++
			return s
		}
	}
	return nil
}

// add makes transaction tid a slot, locked and referenced for the caller
// to load, in the place of the oldest transaction's.
func (c *viewCache) add(tid uint32, now time.Time) *viewSlot {
	s := &viewSlot{tid: tid, loaded: now, refs: 2}
	s.use.Lock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.slots[c.next]; old != nil {
		c.drop(old) // a PDU still answering from it keeps it until done
	}
	c.slots[c.next] = s
	c.next = (c.next + 1) % len(c.slots)
	return s
}
