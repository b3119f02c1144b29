package spmi

import "github.com/perfagent/subagent/asn1tree"

// Live statistics. A source that keeps its values itself (a DDS
// supplier's shared memory) does not copy them at every refresh: its
// statistics are added with Builder.LiveStat and read when they are
// asked for, as PCP's MMV agent reads at fetch time. A refresh then costs
// nothing for them unless their structure changed (StableProvider).

// LiveSource reads the values of a group of live statistics (one
// supplier's). Pin takes one consistent reading of all of them.
type LiveSource interface {
	Pin() LivePin
}

// LivePin is one consistent reading of a LiveSource; Value returns the
// value of the statistic added with field i (NoValue if it has none). A
// pin that also has a Release method is told when its answer is done
// (Answer.Release), so that it can reuse what it holds.
type LivePin interface {
	Value(i uint32) Value
}

// LiveStat adds a statistic whose value src reads at answer time as its
// field i.
func (b *Builder) LiveStat(cx *Node, d *StatDesc, src LiveSource, i uint32) error {
	if src == nil {
		return Errorf(SiBadArgument, "statistic %q: no live source", d.Name)
	}
	if err := b.Stat(cx, d, NoValue); err != nil {
		return err
	}
	n := cx.Children[len(cx.Children)-1]
	n.live, n.field = src, i
	n.liveIdx = uint32(len(b.live))
	b.live = append(b.live, n)
	return nil
}

// IsLive reports whether the statistic's value is read at answer time.
func (n *Node) IsLive() bool { return n.live != nil }

// deferred is the view entry of a live statistic: its index in the part.
func deferred(n *Node) asn1tree.Value {
	return asn1tree.Value{Kind: asn1tree.Deferred, Num: uint64(n.liveIdx)}
}

// Answer answers from one snapshot and pins each live source the first
// time one of its statistics is read, so that the values of one source are
// consistent within everything answered through the Answer (an SNMP
// request, a consumer's get, a hotset evaluation). It is a View. An Answer
// is used by one goroutine at a time.
type Answer struct {
	s    *Snapshot
	pins []pinned
}

type pinned struct {
	src LiveSource
	pin LivePin
}

// Answer starts an answer from the snapshot.
func (s *Snapshot) Answer() *Answer { return &Answer{s: s} }

// Snapshot is the snapshot read.
func (r *Answer) Snapshot() *Snapshot { return r.s }

// Value is the value of statistic n: its own, or for a live statistic the
// one its source's pin holds.
func (r *Answer) Value(n *Node) Value {
	if n.live == nil {
		return n.Value
	}
	for i := range r.pins {
		if r.pins[i].src == n.live {
			return r.pins[i].pin.Value(n.field)
		}
	}
	p := n.live.Pin()
	r.pins = append(r.pins, pinned{n.live, p})
	return p.Value(n.field)
}

// Release tells the pins that the answer is done (it has been encoded):
// the Answer must not be used after. Not calling it is safe, only slower.
func (r *Answer) Release() {
	for _, p := range r.pins {
		if rel, ok := p.pin.(interface{ Release() }); ok {
			rel.Release()
		}
	}
	r.pins = nil
}

// resolve turns a view entry of part p into the value served; NoValue
// when a live statistic has none now.
func (r *Answer) resolve(p *part, v asn1tree.Value) asn1tree.Value {
	if v.Kind != asn1tree.Deferred {
		return v
	}
	if v.Num >= uint64(len(p.live)) {
		return asn1tree.Value{}
	}
	n := p.live[v.Num]
	return n.Stat.SNMPValue(r.Value(n))
}

// Get implements asn1tree.View.
func (r *Answer) Get(oid asn1tree.OID) (asn1tree.Value, bool) {
	p, v, ok := r.s.view.get(oid)
	if !ok {
		return asn1tree.Value{}, false
	}
	v = r.resolve(p, v)
	return v, v.Kind != asn1tree.NoValue
}

// Search implements asn1tree.View: live statistics without a value now
// are skipped as if absent.
func (r *Answer) Search(start asn1tree.OID, include bool, end asn1tree.OID) (asn1tree.OID, asn1tree.Value, bool) {
	for range maxSkips {
		p, o, v, ok := r.s.view.search(start, include, end)
		if !ok {
			return nil, asn1tree.Value{}, false
		}
		if v = r.resolve(p, v); v.Kind != asn1tree.NoValue {
			return o, v, true
		}
		start, include = o, false
	}
	return nil, asn1tree.Value{}, false
}

// maxSkips bounds the entries without a value one Search passes over (a
// supplier that faulted and is not yet removed): past it the search ends
// as if the view did, which an SNMP walk survives.
const maxSkips = 1 << 20

// Current is the statistic's value now: its own, or for a live statistic
// a reading of its source taken for this call alone (an Answer keeps
// several values of one source consistent; this does not).
func (n *Node) Current() Value {
	if n.live == nil {
		return n.Value
	}
	return n.live.Pin().Value(n.field)
}
