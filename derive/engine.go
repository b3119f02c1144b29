package derive

import (
	"hash/fnv"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/expr"
	"github.com/perfagent/subagent/spmi"
)

// State is an alarm instance's state.
type State uint8

const (
	Inactive State = iota
	Pending        // true, for fewer than For evaluations
	Firing         // raised
	Clearing       // raised, false for fewer than Keep evaluations
)

var stateNames = []string{"inactive", "pending", "firing", "clearing"}

func (s State) String() string { return stateNames[min(int(s), len(stateNames)-1)] }

// Event is an alarm instance that went to firing (raised) or from
// clearing back to inactive (Cleared).
type Event struct {
	Alarm    Alarm
	Instance string // "" for an alarm of one value
	Value    float64
	Cleared  bool
	Time     time.Time
}

// Transition is any change of an alarm instance's state, for the log.
type Transition struct {
	Alarm    string
	Instance string
	From, To State
	Value    float64
}

// inst is one alarm instance.
type inst struct {
	state State
	since time.Time
	n     int // evaluations in the state's run: true ones while pending, false ones while clearing
	value float64
	ok    bool // value known at the last evaluation
	// shown: it left inactive once, so its row stays in the table while
	// it has a value (an alarm of one value always has its row).
	shown bool
	gen   uint64 // the alarm's evaluation that last gave it a value
	quiet bool   // its raise was not notified (Frequency): nor is its clear
}

// Stat is one expression's last evaluation.
type Stat struct {
	Took time.Duration
	Cost int
	Err  error
}

type derivedState struct {
	def Derived
	res expr.Result
	Stat
}

type alarmState struct {
	def   Alarm
	gen   uint64 // evaluations that gave values
	insts map[string]*inst
	// raised is when each instance last raised a notified alarm, kept
	// for Frequency (an instance's state may be forgotten sooner).
	raised map[string]time.Time
	Stat
}

// results are what readers see of the engine: made at the end of each
// evaluation and of each Replace, never changed after. The providers (at
// every refresh), Agent/expr, Rows and Errors read the last one without
// the engine's lock, so that no reader, and no SNMP request waiting for
// a refresh, waits for an evaluation.
type results struct {
	derived []derivedResult
	alarms  []alarmResult
	evals   uint64
	took    time.Duration
	defs    uint64 // the definitions' version (Replace): the same expressions in the same order
	// layout is Derived's shape: the definitions and each per-instance
	// statistic's instances; first[k] is derived statistic k's first
	// field as a live source (derivedSource), one field per value.
	layout layout
	first  []uint32
	// rowsVer is the Alarm table's version: it changes when a row does.
	rowsVer uint64
}

// layout tells whether two results have the same Derived tree.
type layout struct {
	defs uint64
	keys uint64 // FNV-1a of the per-instance statistics' instance names
}

type derivedResult struct {
	def Derived
	res expr.Result
	Stat
}

type alarmResult struct {
	def  Alarm
	rows []Row // the instances that have a row, by name
	Stat
}

// Engine evaluates the derived statistics and alarms. It is safe for
// concurrent use: readers read the published results while evaluation
// writes the next.
type Engine struct {
	// Commands are the totals of the alarms' commands (run, dropped,
	// killed, failed) served in Agent/expr; set before the engine is
	// served (nil: 0).
	Commands func() [4]uint64

	mu      sync.Mutex
	derived []*derivedState
	alarms  []*alarmState
	rates   *expr.Rates
	now     func() time.Time
	evals   uint64
	took    time.Duration
	last    weak.Pointer[spmi.Snapshot] // evaluated last: evaluating it again changes nothing
	num     *spmi.Numbering             // Derived's numbers when the provider has none

	pub     atomic.Pointer[results] // the readers' copy (publishLocked)
	defs    uint64                  // Replaces so far
	rowsVer uint64                  // Alarm table versions so far

	fragMu   sync.Mutex
	frag     *spmi.Fragment // Agent/expr as built for fragDefs (AgentStats)
	fragDefs uint64
}

// New returns an engine of defs; now is the clock of the states' since
// (nil: time.Now).
func New(derived []Derived, alarms []Alarm, now func() time.Time) (*Engine, error) {
	if now == nil {
		now = time.Now
	}
	e := &Engine{rates: expr.NewRates(), now: now, num: spmi.NewNumbering("")}
	e.pub.Store(&results{})
	return e, e.Replace(derived, alarms)
}

// Check validates definitions as Replace would install them.
func Check(derived []Derived, alarms []Alarm) error {
	seen := map[string]string{}
	dup := func(kind, name string) error {
		if k, ok := seen[name]; ok {
			return spmierr.Errorf(spmierr.SiDuplicate, "%s %q: name: already the name of a %s (Agent/expr names both)", kind, name, k)
		}
		seen[name] = kind
		return nil
	}
	for i := range derived {
		if err := derived[i].Validate(); err != nil {
			return err
		}
		if err := dup("derived", derived[i].Name); err != nil {
			return err
		}
	}
	for i := range alarms {
		if err := alarms[i].Validate(); err != nil {
			return err
		}
		if err := dup("alarm", alarms[i].Name); err != nil {
			return err
		}
	}
	return nil
}

// Replace installs new definitions (a reload). An alarm whose
// definition is unchanged keeps its instances' states, so a reload
// neither raises nor clears again; counters keep their rates.
func (e *Engine) Replace(derived []Derived, alarms []Alarm) error {
	if err := Check(derived, alarms); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	oldD := map[string]*derivedState{}
	for _, d := range e.derived {
		oldD[d.def.Name] = d
	}
	e.derived = make([]*derivedState, len(derived))
	for i, d := range derived {
		if o := oldD[d.Name]; o != nil && o.def.X.String() == d.X.String() {
			o.def, e.derived[i] = d, o
			continue
		}
		e.derived[i] = &derivedState{def: d}
	}
	oldA := map[string]*alarmState{}
	for _, a := range e.alarms {
		oldA[a.def.Name] = a
	}
	e.alarms = make([]*alarmState, len(alarms))
	for i, a := range alarms {
		if o := oldA[a.Name]; o != nil && sameAlarm(o.def, a) {
			e.alarms[i] = o
			continue
		}
		e.alarms[i] = &alarmState{def: a, insts: map[string]*inst{}}
	}
	e.defs++
	e.publishLocked()
	return nil
}

// publishLocked publishes the results for the readers; e.mu is held.
func (e *Engine) publishLocked() {
	prev := e.pub.Load()
	r := &results{evals: e.evals, took: e.took, defs: e.defs,
		derived: make([]derivedResult, len(e.derived)), alarms: make([]alarmResult, len(e.alarms)),
		first: make([]uint32, len(e.derived)+1)}
	h := fnv.New64a()
	for i, d := range e.derived {
		r.derived[i] = derivedResult{def: d.def, res: d.res, Stat: d.Stat}
		n := uint32(1)
		if d.def.X.PerInstance() {
			n = uint32(len(d.res.Elems))
			for _, el := range d.res.Elems {
				h.Write([]byte(el.Key))
				h.Write([]byte{0})
			}
		}
		h.Write([]byte{1})
		r.first[i+1] = r.first[i] + n
	}
	r.layout = layout{defs: e.defs, keys: h.Sum64()}
	same := prev != nil && prev.defs == e.defs
	for i, a := range e.alarms {
		r.alarms[i] = alarmResult{def: a.def, rows: a.rows(), Stat: a.Stat}
		same = same && slices.Equal(r.alarms[i].rows, prev.alarms[i].rows)
	}
	if !same {
		e.rowsVer++
	}
	r.rowsVer = e.rowsVer
	e.pub.Store(r)
}

// rows are the alarm's instances that have a row, in the order of their
// names.
func (a *alarmState) rows() []Row {
	if len(a.insts) == 0 {
		return nil
	}
	keys := make([]string, 0, len(a.insts))
	for k := range a.insts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]Row, len(keys))
	for i, k := range keys {
		in := a.insts[k]
		out[i] = Row{Alarm: a.def.Name, Instance: k, State: in.state, Since: in.since, Value: in.value, OK: in.ok,
			Severity: a.def.Severity, Count: in.n}
	}
	return out
}

// Evaluate evaluates every expression over snap and returns the alarms'
// events and every state transition. Evaluating the snapshot evaluated
// last again changes nothing.
func (e *Engine) Evaluate(snap *spmi.Snapshot) ([]Event, []Transition) {
	e.mu.Lock()
	defer e.mu.Unlock()
	w := weak.Make(snap)
	if w == e.last {
		return nil, nil
	}
	e.last = w
	start := time.Now()
	now := e.now()
	env := e.rates.Begin(snap)
	for _, d := range e.derived {
		t := time.Now()
		d.res, d.Err = d.def.X.Eval(env)
		d.Took, d.Cost = time.Since(t), d.res.Cost
	}
	var evs []Event
	var trs []Transition
	for _, a := range e.alarms {
		t := time.Now()
		res, err := a.def.X.Eval(env)
		a.Took, a.Cost, a.Err = time.Since(t), res.Cost, err
		if err != nil {
			continue // states stay as they were until the expression reads again
		}
		evs, trs = a.step(res, now, evs, trs)
	}
	env.End()
	e.evals++
	e.took = time.Since(start)
	e.publishLocked()
	return evs, trs
}

// step advances every instance of the alarm by one evaluation.
func (a *alarmState) step(res expr.Result, now time.Time, evs []Event, trs []Transition) ([]Event, []Transition) {
	vals := res.Elems
	if !res.Vector {
		vals = nil
		if res.OK {
			vals = []expr.Elem{{Value: res.Value}}
		}
	}
	a.gen++
	for _, el := range vals {
		key, v := el.Key, el.Value
		in := a.insts[key]
		if in == nil {
			if res.Vector && !a.holds(Inactive, v) {
				continue // a quiet instance: no state, no row
			}
			in = &inst{since: now}
			a.insts[key] = in
		}
		in.value, in.ok, in.gen = v, true, a.gen
		from := in.state
		ev := a.advance(key, in, a.holds(in.state, v), now)
		if in.state != from {
			trs = append(trs, Transition{Alarm: a.def.Name, Instance: key, From: from, To: in.state, Value: v})
		}
		if ev != nil {
			ev.Instance, ev.Value = key, v
			evs = append(evs, *ev)
		}
		if in.state != Inactive {
			in.shown = true
		} else if !in.shown && res.Vector {
			delete(a.insts, key) // never left inactive: no row
		}
	}
	for key, t := range a.raised {
		if now.Sub(t) >= a.def.Frequency {
			delete(a.raised, key)
		}
	}
	// An instance without a value (a counter's first reading, one that
	// vanished) keeps its state, and is forgotten once inactive.
	for key, in := range a.insts {
		if in.gen != a.gen {
			in.ok = false
			if in.state == Inactive {
				delete(a.insts, key)
			}
		}
	}
	return evs, trs
}

// holds tells whether the condition holds for value v in state s.
func (a *alarmState) holds(s State, v float64) bool {
	if a.def.Rising == nil {
		return v != 0
	}
	if s == Firing || s == Clearing {
		return v > a.def.falling()
	}
	return v >= *a.def.Rising
}

// advance moves in (instance key) by one evaluation whose condition is
// c; it returns the event of a raise or a clear, none within Frequency of
// the instance's last notified raise.
func (a *alarmState) advance(key string, in *inst, c bool, now time.Time) *Event {
	d := &a.def
	set := func(s State) {
		if in.state != s {
			in.state, in.since, in.n = s, now, 0
		}
	}
	switch in.state {
	case Inactive, Pending:
		if !c {
			set(Inactive)
			return nil
		}
		set(Pending)
		if in.n++; in.n >= d.For {
			set(Firing)
			if _, recent := a.raised[key]; recent {
				in.quiet = true
				return nil
			}
			in.quiet = false
			if d.Frequency > 0 {
				if a.raised == nil {
					a.raised = map[string]time.Time{}
				}
				a.raised[key] = now
			}
			return &Event{Alarm: *d, Time: now}
		}
	case Firing, Clearing:
		if c {
			set(Firing)
			return nil
		}
		set(Clearing)
		if in.n++; in.n >= d.Keep {
			set(Inactive)
			if in.quiet {
				return nil
			}
			return &Event{Alarm: *d, Time: now, Cleared: true}
		}
	}
	return nil
}
