package slo

import "time"

// Rule is a multi-window burn-rate alarm (the SRE workbook's): raised
// when the burn rate over both Long and Short reaches Factor, cleared
// when that no longer holds, which the short window makes quick once
// the errors stop.
type Rule struct {
	Name        string // page, ticket
	Factor      float64
	Long, Short time.Duration // whole minutes, at most FineSpan
}

// DefaultRules are the workbook's for a 30-day window.
var DefaultRules = []Rule{
	{Name: "page", Factor: 14.4, Long: time.Hour, Short: 5 * time.Minute},
	{Name: "ticket", Factor: 6, Long: 6 * time.Hour, Short: 30 * time.Minute},
}

// Event is an alarm raised or cleared.
type Event struct {
	Objective       string
	Rule            Rule
	Raised          bool // false: cleared
	LongBurn, Short float64
}

// SetRules replaces the alarm rules (at most 2: page, ticket); an alarm
// raised under a rule of the same name stays raised.
func (s *Set) SetRules(rules []Rule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = append(s.rules[:0:0], rules...)
	for _, x := range s.objs {
		x.setSpans(s.rules)
	}
}

// Rules are the alarm rules in force.
func (s *Set) Rules() []Rule {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Rule(nil), s.rules...)
}

// Evaluate checks every objective's alarms at now and returns those that
// were raised or cleared since the previous evaluation. It rolls the
// buckets to now first, so that reads until the next find their running
// sums up to date.
func (s *Set) Evaluate(now time.Time) []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Event
	m := minuteOf(now)
	for _, x := range s.objs {
		if x.raised == nil {
			x.raised = map[string]bool{}
		}
		x.roll(now)
		for _, r := range s.rules {
			lt, lb := x.fineSum(m, int64(r.Long/Fine))
			st, sb := x.fineSum(m, int64(r.Short/Fine))
			long, short := burn(lt, min(lb, lt), x.Target), burn(st, min(sb, st), x.Target)
			on := long >= r.Factor && short >= r.Factor
			if on != x.raised[r.Name] {
				x.raised[r.Name] = on
				out = append(out, Event{Objective: x.Name, Rule: r, Raised: on, LongBurn: long, Short: short})
			}
		}
	}
	return out
}
