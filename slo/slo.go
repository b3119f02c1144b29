// Package slo keeps service level objectives of ARM transactions: for
// each, good and total completions in fixed time buckets (buckets.go),
// fed at every drain by package rtimearm with the exact classification
// the ARM libraries made of each instance (armring.Totals.Slow), from
// which the window's SLI, the error budget left and the burn rates are
// exact to a bucket (docs/ARM.md, "Service levels").
package slo

import (
	"fmt"
	"path"
	"slices"
	"sync"
	"time"

	"github.com/perfagent/subagent/client/armring"
	"github.com/perfagent/subagent/rtimearm"
)

// Objective is one service level objective, as config/ validated it.
type Objective struct {
	Name        string
	Application string        // pattern (path.Match) of application keys
	Transaction string        // pattern of transaction keys
	Threshold   time.Duration // good: status good within it; 0: availability, good = status good
	Target      float64       // ratio of good completions, 0 < Target < 1
	Window      time.Duration // 1 h to 90 days: whole minutes up to 3 days, whole hours beyond
}

// Burn periods: the burn rate over each is served.
var Periods = []time.Duration{5 * time.Minute, 30 * time.Minute, time.Hour, 6 * time.Hour, 24 * time.Hour, 72 * time.Hour}

// history is what changes the meaning of the counts: an objective
// reloaded with the same keeps them.
func (o *Objective) history() string {
	return fmt.Sprintf("%s\x00%s\x00%d\x00%d", o.Application, o.Transaction, o.Threshold, o.Window)
}

// obj is an objective and its counts.
type obj struct {
	Objective
	f            fine
	c            *coarse         // windows beyond FineSpan
	unclassified uint64          // completions of transactions with more thresholds than the library classifies
	raised       map[string]bool // alarms raised, by rule name (Evaluate)
	spans        []span          // running sums of the minute spans read (sums.go)
	cSum         [2]uint64       // running sum of c's ring
}

func newObj(o Objective, rules []Rule) *obj {
	x := &obj{Objective: o}
	if o.Window > FineSpan {
		x.c = &coarse{b: make([][2]uint64, o.Window/Coarse)}
	}
	x.setSpans(rules)
	return x
}

// add counts total completions, bad of them not good, at now, in the
// buckets and the running sums; a bucket older than its ring is dropped.
func (x *obj) add(now time.Time, total, bad uint64) {
	m := minuteOf(now)
	if m <= 0 {
		return
	}
	x.roll(now)
	if m > x.f.head-FineN {
		d := x.f.put(m, total, bad)
		for i := range x.spans {
			if sp := &x.spans[i]; m > x.f.head-sp.n {
				sp.sum = [2]uint64{sp.sum[0] + d[0], sp.sum[1] + d[1]}
			}
		}
	}
	if c := x.c; c != nil {
		if h, n := hourOf(now), int64(len(c.b)); h > c.head-n {
			b := &c.b[h%n]
			b[0] += total
			b[1] += bad
			x.cSum = [2]uint64{x.cSum[0] + total, x.cSum[1] + bad}
		}
	}
}

// Set is the objectives in force.
type Set struct {
	mu    sync.Mutex
	objs  []*obj // in configuration order
	rules []Rule // burn-rate alarms (alarm.go)
}

// NewSet returns the objectives with empty counts.
func NewSet(objs []Objective) *Set {
	s := &Set{rules: DefaultRules}
	s.Reconfigure(objs)
	return s
}

// Reconfigure replaces the objectives; one with the same name and
// history keeps its counts. The registry must match again
// (rtimearm.Registry.SetObjectives).
func (s *Set) Reconfigure(objs []Objective) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := map[string]*obj{}
	for _, x := range s.objs {
		old[x.Name] = x
	}
	s.objs = s.objs[:0:0]
	for _, o := range objs {
		x := old[o.Name]
		if x == nil || x.history() != o.history() {
			x = newObj(o, s.rules)
		}
		x.Objective = o
		s.objs = append(s.objs, x)
	}
}

// match is the objectives of one transaction.
type match struct {
	s    *Set
	th   []uint64 // the thresholds the library classifies against (ns)
	objs []*obj
	slot []int // index in th; -1 availability; -2 not classified
}

// Match implements rtimearm.Objectives: the objectives of app/tran, and
// the thresholds its library is to classify against, at most
// armring.MaxThresholds of the lowest.
func (s *Set) Match(app, tran string) rtimearm.Matched {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := &match{s: s}
	for _, x := range s.objs {
		if ok, _ := path.Match(x.Application, app); !ok {
			continue
		}
		if ok, _ := path.Match(x.Transaction, tran); !ok {
			continue
		}
		m.objs = append(m.objs, x)
		if x.Threshold > 0 && !slices.Contains(m.th, uint64(x.Threshold)) {
			m.th = append(m.th, uint64(x.Threshold))
		}
	}
	if len(m.objs) == 0 {
		return nil
	}
	slices.Sort(m.th)
	m.th = m.th[:min(len(m.th), armring.MaxThresholds)]
	for _, x := range m.objs {
		k := -1
		if x.Threshold > 0 {
			if k = slices.Index(m.th, uint64(x.Threshold)); k < 0 {
				k = -2
			}
		}
		m.slot = append(m.slot, k)
	}
	return m
}

func (m *match) Thresholds() []uint64 { return m.th }

// Observe counts one drain's completions of the transaction.
func (m *match) Observe(now time.Time, t *armring.Totals) {
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	for i, x := range m.objs {
		bad := t.Aborted + t.Failed
		switch k := m.slot[i]; {
		case k == -2:
			x.unclassified += t.Done()
			continue
		case k >= 0:
			bad += t.Slow[k]
		}
		x.add(now, t.Done(), bad)
	}
}

// Status is an objective's state at a time.
type Status struct {
	Objective
	Good, Total  uint64 // over the window
	SLI          float64
	HasSLI       bool    // Total > 0
	Budget       float64 // error budget left: 1 - bad/((1-Target)*Total); 1 with no completion
	Burn         []float64
	Unclassified uint64
	Raised       []string // the alarms raised, by rule name
}

// burn is the rate at which bad of total spend a budget of 1-target.
func burn(total, bad uint64, target float64) float64 {
	if total == 0 {
		return 0
	}
	return float64(bad) / float64(total) / (1 - target)
}

// status computes x's state at now without changing it (reads never write).
func (x *obj) status(now time.Time) Status {
	st := Status{Objective: x.Objective, Unclassified: x.unclassified, Budget: 1}
	for name, on := range x.raised {
		if on {
			st.Raised = append(st.Raised, name)
		}
	}
	slices.Sort(st.Raised)
	m := minuteOf(now)
	var total, bad uint64
	if x.c != nil {
		total, bad = x.coarseSum(hourOf(now))
	} else {
		total, bad = x.fineSum(m, int64(x.Window/Fine))
	}
	bad = min(bad, total)
	st.Total, st.Good = total, total-bad
	if total > 0 {
		st.SLI, st.HasSLI = float64(st.Good)/float64(total), true
		st.Budget = 1 - burn(total, bad, x.Target)
	}
	for _, p := range Periods {
		t, b := x.fineSum(m, int64(p/Fine))
		st.Burn = append(st.Burn, burn(t, min(b, t), x.Target))
	}
	return st
}

// Statuses is every objective's state at now, in configuration order.
func (s *Set) Statuses(now time.Time) []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Status, 0, len(s.objs))
	for _, x := range s.objs {
		out = append(out, x.status(now))
	}
	return out
}
