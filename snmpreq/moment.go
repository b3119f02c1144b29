package snmpreq

import (
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

// Moments gives a front end the views it answers from and keeps its walks
// and the age of its answers' data. P identifies a peer: a manager's
// address, an AgentX session. Safe for concurrent use.
type Moments[P comparable] struct {
	// Src is called with nil for the current moment, which may wait for
	// fresh values (spmi's FreshWithin: up to refresh.snmp_wait, without
	// limit for the first snapshot); with a moment it returned, it
	// returns that moment's view at once.
	Src   asn1tree.Source
	Walks *asn1tree.Walks[P] // nil: walks are not kept
	Ages  *asn1tree.DataAges // nil: ages are not kept
}

// Moment is what one request (AgentX: one transaction) is answered from.
type Moment struct {
	View asn1tree.View // never nil
	at   any           // the moment; nil: none Src can return to
	step asn1tree.Step // the walk the request goes on with
}

// Lookup finds the walk a GetNext or GetBulk of peer whose First is
// first goes on with (nil first: none). A Step with a moment (Waits
// false) is answered at once; otherwise Open may wait for fresh values.
func (m *Moments[P]) Lookup(peer P, first asn1tree.OID) asn1tree.Step {
	if first == nil || m.Walks == nil {
		return asn1tree.Step{}
	}
	return m.Walks.Lookup(peer, first)
}

// Waits reports whether opening step's moment may wait for fresh values.
func Waits(step asn1tree.Step) bool { return step.At() == nil }

// Open loads the view of step's moment: the walk's, or the current one.
func (m *Moments[P]) Open(step asn1tree.Step) Moment {
	v, at := m.Src(step.At())
	if v == nil {
		v, at = Empty{}, nil
	}
	return Moment{View: v, at: at, step: step}
}

// Answered records an answer sent from mo at now: its data's age and,
// for a GetNext or GetBulk (walk), where it ended (names: Scratch.Names).
// An AgentX transaction answered in several PDUs records each; mo then
// names the walk they continue.
func (m *Moments[P]) Answered(mo *Moment, peer P, walk bool, names []asn1tree.OID, now time.Time) {
	if m.Ages != nil {
		m.Ages.Record(mo.View, now)
	}
	if walk && m.Walks != nil && mo.at != nil && len(names) > 0 {
		mo.step = m.Walks.Record(mo.step, peer, mo.at, names)
	}
}

// Release tells the view that nothing reads it any more (an spmi.Answer
// pins suppliers' values until then); mo must not be used after.
func (mo *Moment) Release() {
	if r, ok := mo.View.(interface{ Release() }); ok {
		r.Release()
	}
	*mo = Moment{}
}

// Empty is the view of a source that returned none.
type Empty struct{}

func (Empty) Get(asn1tree.OID) (asn1tree.Value, bool) { return asn1tree.Value{}, false }
func (Empty) Search(asn1tree.OID, bool, asn1tree.OID) (asn1tree.OID, asn1tree.Value, bool) {
	return nil, asn1tree.Value{}, false
}
