package hotset

import (
	"sync"
	"time"
	"weak"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

// Item is one peer statistic returned by a hotset (the guide's
// SpmiHotItems): its peer context's name and the compared value, a rate
// per second for counters and a level for quantities.
type Item struct {
	Name   string         // the peer context's name ("sda")
	Path   string         // the statistic's path ("Disk/sda/busy")
	OID    asn1tree.OID   // the OID serving the statistic (ServedOID)
	Value  float64        // compared with the threshold
	Units  string         // of Value: the statistic's, "per second" added for counters
	Served asn1tree.Value // what an SNMP get of OID answers now
	// Raw is the statistic's value as its source keeps it: a counter's
	// count (the guide's SpmiHotItems.val), a quantity's level.
	Raw float64
	// NoRate: a counter read for the first time, fed by SiHotAlways with
	// Value 0 until the next evaluation gives it a rate.
	NoRate bool

	node *spmi.Node     // OID and Served are filled for returned items only
	raw  spmiwire.Value // the value read, for Served
}

// Group is one peer set (the guide's SpmiHotVals) after an evaluation.
type Group struct {
	Parent string // path of the peers' parent context ("Disk/", "FS/rootvg/")
	Avail  int    // values that qualify for the feed (avail_resp)
	Items  []Item // the feed, ordered and capped at maxresp (count = len)
}

// Result is the last evaluation of a hotset.
type Result struct {
	Time    time.Time
	Elapsed time.Duration // since the previous evaluation; zero on the first
	Groups  []Group
	Err     error // grandparent or statistic not found (SiNotFound), not numeric; nil when read
}

// Event is one exception or notification of a peer set: the items beyond
// the threshold, capped at maxresp.
type Event struct {
	Def    Def
	Parent string
	Time   time.Time
	Items  []Item
	// Cleared: the one item went back past the falling threshold (Def.Rearm)
	// after it raised an event; not an exception.
	Cleared bool
	// Held: the hotset's Limit held back the event's report (notification
	// and log line); its exception is recorded all the same.
	Held bool
	// Suppressed: for a report let through, the reports of the hotset held
	// back since the previous one; for one held back, those held back so
	// far in this episode, this one included (1 starts an episode).
	Suppressed uint64
}

// Exception is a recorded exception (kept in a bounded ring per hotset).
type Exception struct {
	Seq uint32 // numbers the rows of the exceptions table, from 1, never reused
	Event
}

type prevVal struct {
	v spmiwire.Value
	t time.Time
}

// state is one configured hotset with what it remembers between
// evaluations: counter values for rates and the last event per peer set.
// It holds no node of a snapshot, so results never keep a snapshot alive.
type state struct {
	def  Def
	prev map[string]prevVal   // by statistic path
	last map[string]time.Time // last event by peer set parent
	// raised holds the peers (statistic paths) that raised an event and
	// have not re-armed yet: with Def.Rearm only.
	raised map[string]bool
	res    Result
	excps  []Exception
	seq    uint32
	events uint64 // exceptions and notifications generated
	// read is the snapshot last evaluated, weakly: evaluating it again
	// keeps the results (a counter has no rate within one snapshot).
	read   weak.Pointer[spmi.Snapshot]
	bound  int64 // most bytes the state may hold after evaluating that snapshot
	bucket bucket
}

// Engine evaluates the configured hotsets. It is safe for concurrent use:
// the provider reads results while the evaluation loop writes them.
type Engine struct {
	mu    sync.Mutex
	sets  []*state
	keep  int
	now   func() time.Time
	evals uint64
	limit Limit // for the Limit fields a Def leaves zero
}

// New returns an engine for defs keeping the keep most recent exceptions
// per hotset; now is the clock for the frequency limit (nil: time.Now).
func New(defs []Def, keep int, now func() time.Time) (*Engine, error) {
	if now == nil {
		now = time.Now
	}
	e := &Engine{keep: max(keep, 1), now: now, limit: DefaultLimit}
	return e, e.Replace(defs)
}

// Replace installs new definitions (a reload). A hotset whose definition
// is unchanged keeps its counters, rates and frequency limits, so a
// reload neither loses a rate nor repeats a notification; one whose
// Limit alone changed keeps them too, and its bucket.
func (e *Engine) Replace(defs []Def) error {
	seen := map[string]bool{}
	for i := range defs {
		if err := defs[i].Validate(); err != nil {
			return err
		}
		if seen[defs[i].Name] {
			return spmierr.Errorf(spmierr.SiDuplicate, "hotset %q: name: defined twice", defs[i].Name)
		}
		seen[defs[i].Name] = true
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	old := map[string]*state{}
	for _, s := range e.sets {
		old[s.def.Name] = s
	}
	sets := make([]*state, len(defs))
	for i, d := range defs {
		if s := old[d.Name]; s != nil && sameButLimit(s.def, d) {
			s.def, sets[i] = d, s
			continue
		}
		sets[i] = newState(d)
	}
	e.sets = sets
	return nil
}

func sameButLimit(a, b Def) bool {
	a.Limit, b.Limit = Limit{}, Limit{}
	return a == b
}

// SetLimit sets the Limit fields that definitions leave zero; zero
// fields of l keep DefaultLimit's.
func (e *Engine) SetLimit(l Limit) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.limit = l.or(DefaultLimit)
}

// SetKeep changes how many recent exceptions each hotset keeps.
func (e *Engine) SetKeep(keep int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.keep = max(keep, 1)
}

// Defs returns the installed definitions.
func (e *Engine) Defs() []Def {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Def, len(e.sets))
	for i, s := range e.sets {
		out[i] = s.def
	}
	return out
}

// Evaluate reads every hotset from one snapshot (one refresh of the
// sources for all peer sets) and returns the exceptions and notifications
// the frequency limit lets through.
func (e *Engine) Evaluate(snap *spmi.Snapshot) []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	e.evals++
	read := weak.Make(snap)
	var evs []Event
	for _, s := range e.sets {
		if s.read == read {
			continue
		}
		s.read = read
		evs = append(evs, s.evaluate(snap, now, e.keep, s.def.Limit.or(e.limit))...)
		if n := len(s.excps); n > e.keep {
			s.excps = append([]Exception(nil), s.excps[n-e.keep:]...)
		}
	}
	return evs
}

// Forget drops what every hotset remembers (results, exceptions, counter
// values, frequency limits) and keeps the definitions: the next
// evaluation starts as the first did, but for the rate limit (Limit),
// which forgetting must not reset.
func (e *Engine) Forget() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, s := range e.sets {
		n := newState(s.def)
		n.seq, n.events, n.bucket = s.seq, s.events, s.bucket
		e.sets[i] = n
	}
}

func newState(d Def) *state {
	return &state{def: d, prev: map[string]prevVal{}, last: map[string]time.Time{}, raised: map[string]bool{}}
}

func (s *state) evaluate(snap *spmi.Snapshot, now time.Time, keep int, lim Limit) []Event {
	d := &s.def
	s.bound = stateBytes
	res := Result{Time: snap.Time}
	if !s.res.Time.IsZero() {
		res.Elapsed = snap.Time.Sub(s.res.Time)
	}
	gp, err := snap.Lookup(d.GrandParent)
	switch {
	case err != nil:
		err = spmierr.Errorf(spmierr.SiNotFound, "%s matches no statistic: there is no context %s%s", d.Path(), d.GrandParent, hint(snap, d))
	case gp.IsStat():
		err = spmierr.Errorf(spmierr.SiBadArgument, "%q is a statistic, not a context", d.GrandParent)
	}
	var groups []group
	if err == nil {
		// A statistic that matches nothing is an error (the guide's
		// SpmiAddSetHot refuses it); peers that appear later clear it.
		if groups = peerGroups(gp, d.Stat); len(groups) == 0 {
			err = spmierr.Errorf(spmierr.SiNotFound, "%s matches no statistic: no peer under %s holds %q%s", d.Path(), d.GrandParent, d.Stat, hint(snap, d))
		}
	}
	if err != nil {
		res.Err = err
		s.res = res
		s.bound += int64(len(err.Error()))
		return nil
	}
	s.bound += boundOf(d, groups, len(snap.Base), keep)
	seen := make(map[string]prevVal, len(s.prev))
	raised := make(map[string]bool, len(s.raised))
	ans := snap.Answer() // one consistent reading of each live source
	var evs []Event
	for _, g := range groups {
		vals := make([]Item, 0, len(g.stats))
		var unrated []Item // counters without a previous value: fed by SiHotAlways only
		for _, n := range g.stats {
			if n.Stat.Data == spmiwire.SiText {
				res.Err = spmierr.Errorf(spmierr.SiBadArgument, "%q is text; a hotset compares numbers", n.Path)
				break
			}
			raw := ans.Value(n)
			v, ok := s.value(n, raw, snap.Time, seen)
			it := Item{Name: n.Parent.Name, Path: n.Path, Value: v, Raw: raw.Float64(), node: n, raw: raw}
			switch {
			case ok:
				vals = append(vals, it)
			case raw.OK() && d.Feed == FeedAlways:
				it.NoRate = true
				unrated = append(unrated, it)
			}
		}
		order(vals, d.Threshold < 0)
		order(unrated, false) // by path: their values are all 0
		hot := beyond(vals, d.Threshold)
		grp := Group{Parent: g.parent.Path}
		switch d.Feed {
		case FeedThreshold:
			grp.Avail, grp.Items = len(hot), capped(hot, d.MaxResp, snap)
		case FeedAlways:
			all := append(vals, unrated...)
			grp.Avail, grp.Items = len(all), capped(all, d.MaxResp, snap)
		default:
			grp.Avail = len(hot) // no feed: what exceptions would see
		}
		res.Groups = append(res.Groups, grp)
		switch {
		case d.Excp == ExcpNone:
		case d.Rearm != 0:
			for _, n := range g.stats { // a raised peer without a value now stays raised
				if s.raised[n.Path] {
					raised[n.Path] = true
				}
			}
			evs = append(evs, s.alarm(g.parent.Path, vals, raised, now, snap)...)
		case len(hot) > 0 && s.due(g.parent.Path, now):
			evs = append(evs, Event{Def: *d, Parent: g.parent.Path, Time: now, Items: capped(hot, d.MaxResp, snap)})
		}
	}
	s.prev = seen // peers that vanished are forgotten
	s.raised = raised
	s.res = res
	s.bound += s.pruneLast(groups, now)
	s.limit(evs, now, lim)
	for _, ev := range evs {
		s.events++
		if d.Excp.Exceptions() && !ev.Cleared {
			s.seq++
			s.excps = append(s.excps, Exception{Seq: s.seq, Event: ev})
		}
	}
	return evs
}

// value is the compared value of n: the level of a quantity, the rate
// per second of a counter since the previous evaluation (none on the
// first, after a gap in the values, or when no time passed).
func (s *state) value(n *spmi.Node, v spmiwire.Value, t time.Time, seen map[string]prevVal) (float64, bool) {
	if !v.OK() {
		return 0, false
	}
	if n.Stat.Val != ddswire.SiCounter {
		return v.Float64(), true
	}
	seen[n.Path] = prevVal{v, t}
	p, ok := s.prev[n.Path]
	if !ok || !t.After(p.t) {
		return 0, false
	}
	return counterChange(p.v, v) / t.Sub(p.t).Seconds(), true
}

// counterChange is the increase of a counter; one that went backwards was
// reset, and its change is unknown: zero, never a huge number.
func counterChange(prev, cur spmiwire.Value) float64 {
	a, b := prev.Float64(), cur.Float64()
	if pu, cu := prev.Uint64(), cur.Uint64(); float64(pu) == a && float64(cu) == b {
		if cu < pu {
			return 0
		}
		return float64(cu - pu)
	}
	return max(b-a, 0)
}

// alarm applies RMON's hysteresis to one peer set's ordered values: a
// peer that raised an event stays raised (in raised, filled for this
// evaluation) until its value is no longer beyond Rearm, which clears it
// (a cleared event when Def.Cleared); an armed peer beyond the threshold
// raises, in one event per peer set at most once per frequency. An armed
// peer held back by the frequency stays armed and raises later if it is
// still beyond.
func (s *state) alarm(parent string, vals []Item, raised map[string]bool, now time.Time, snap *spmi.Snapshot) []Event {
	d := &s.def
	var fresh []Item
	var evs []Event
	for _, it := range vals {
		switch {
		case s.raised[it.Path] && qualifies(it.Value, d.Rearm):
			raised[it.Path] = true
		case s.raised[it.Path]:
			delete(raised, it.Path)
			if d.Cleared {
				evs = append(evs, Event{Def: *d, Parent: parent, Time: now, Items: capped([]Item{it}, 1, snap), Cleared: true})
			}
		case qualifies(it.Value, d.Threshold):
			fresh = append(fresh, it)
		}
	}
	if len(fresh) == 0 || !s.due(parent, now) {
		return evs
	}
	items := capped(fresh, d.MaxResp, snap)
	for _, it := range items {
		raised[it.Path] = true
	}
	return append(evs, Event{Def: *d, Parent: parent, Time: now, Items: items})
}

// pruneLast forgets the peer sets whose last event is a frequency old
// (due again, remembered or not), so that peer sets that come and go
// are remembered for one frequency at most; it returns the bytes the
// remembered sets that are gone hold, which boundOf does not count.
func (s *state) pruneLast(groups []group, now time.Time) int64 {
	cur := make(map[string]bool, len(groups))
	for _, g := range groups {
		cur[g.parent.Path] = true
	}
	var n int64
	for p, t := range s.last {
		switch {
		case now.Sub(t) >= s.def.Frequency:
			delete(s.last, p)
		case !cur[p]:
			n += lastBytes + strBytes(p)
		}
	}
	return n
}

// due tells whether the peer set may raise an event now, and if so
// records that it does.
func (s *state) due(parent string, now time.Time) bool {
	if last, ok := s.last[parent]; ok && now.Sub(last) < s.def.Frequency {
		return false
	}
	s.last[parent] = now
	return true
}
