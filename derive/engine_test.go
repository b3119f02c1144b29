package derive

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/expr"
	"github.com/perfagent/subagent/spmi"
)

var (
	pumpsCx  = spmi.CxDesc{Name: "Pumps", Descr: "Pumps", ASN: 99, Inst: ddswire.SiContInst}
	pumpTpl  = spmi.CxDesc{Descr: "Pump"}
	pumpStat = []spmiwire.StatDesc{
		{Name: "load", Descr: "load", ASN: 1, Max: 100, Val: ddswire.SiQuantity},
		{Name: "flow", Descr: "flow", ASN: 2, Max: 100, Val: ddswire.SiCounter},
	}
)

// pumps builds a snapshot at t of pumps with loads and flow counters.
func pumps(t testing.TB, at time.Time, load map[string]int64, flow map[string]uint64) *spmi.Snapshot {
	b := spmi.NewBuilder(asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1}, nil, at)
	if err := addPumps(b, load, flow); err != nil {
		t.Fatal(err)
	}
	return b.Finish()
}

// addPumps adds the Pumps context of pumps to b.
func addPumps(b *spmi.Builder, load map[string]int64, flow map[string]uint64) error {
	top, err := b.Context(nil, &pumpsCx)
	if err != nil {
		return err
	}
	for _, n := range []string{"p1", "p2", "p3"} {
		if _, ok := load[n]; !ok {
			continue
		}
		in, err := b.Instance(top, &pumpTpl, n, "", 0)
		if err != nil {
			return err
		}
		if err := b.Stats(in, pumpStat, []spmiwire.Value{spmiwire.Int(load[n]), spmiwire.Uint(flow[n])}); err != nil {
			return err
		}
	}
	return nil
}

func mustParse(t testing.TB, s string) *expr.Expr {
	x, err := expr.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// clock is the engine's controlled clock: one second per evaluation.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// run evaluates the engine once per load of p1 and returns the state
// after each evaluation and the events, as text.
func run(t *testing.T, e *Engine, c *clock, loads ...int64) (states []string, events []string) {
	for _, l := range loads {
		c.t = c.t.Add(time.Second)
		evs, _ := e.Evaluate(pumps(t, c.t, map[string]int64{"p1": l}, nil))
		for _, ev := range evs {
			kind := "raised"
			if ev.Cleared {
				kind = "cleared"
			}
			events = append(events, fmt.Sprintf("%s@%d", kind, len(states)+1))
		}
		rows := e.Rows()
		s := "none"
		if len(rows) == 1 {
			s = rows[0].State.String()
		}
		states = append(states, s)
	}
	return states, events
}

// An alarm with for 3 and keep 2 on p1's load above 80 goes exactly
// pending, pending, firing (one raise), clearing, inactive (one clear);
// a spike shorter than for raises nothing.
func TestAlarmForAndKeep(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	a := Alarm{Name: "hot", X: mustParse(t, "Pumps/p1/load > 80"), For: 3, Keep: 2, Cleared: true}
	e, err := New(nil, []Alarm{a}, c.now)
	if err != nil {
		t.Fatal(err)
	}
	states, events := run(t, e, c, 10, 90, 95, 99, 10, 90, 10, 10)
	want := "inactive pending pending firing clearing firing clearing inactive"
	if got := strings.Join(states, " "); got != want {
		t.Errorf("states %s, want %s", got, want)
	}
	if got := strings.Join(events, " "); got != "raised@4 cleared@8" {
		t.Errorf("events %s, want raised@4 cleared@8", got)
	}
	rows := e.Rows()
	if len(rows) != 1 || !rows[0].Since.Equal(c.t) || rows[0].Value != 0 {
		t.Errorf("row %+v, want inactive since %v with value 0 (load > 80 is false)", rows, c.t)
	}
	// A spike of two evaluations, shorter than for: pending, then back.
	states, events = run(t, e, c, 90, 90, 10, 10)
	if got := strings.Join(states, " "); got != "pending pending inactive inactive" || len(events) != 0 {
		t.Errorf("spike: states %s events %v, want pending pending inactive inactive and none", got, events)
	}
}

// Rising and falling thresholds: firing from 80 up, held until 50 or
// below; for 1 and keep 1 raise and clear at once.
func TestAlarmThresholds(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	rise, fall := 80.0, 50.0
	a := Alarm{Name: "th", X: mustParse(t, "Pumps/p1/load"), Rising: &rise, Falling: &fall, For: 1, Keep: 1}
	e, err := New(nil, []Alarm{a}, c.now)
	if err != nil {
		t.Fatal(err)
	}
	states, events := run(t, e, c, 79, 80, 60, 51, 50, 79, 81)
	if got := strings.Join(states, " "); got != "inactive firing firing firing inactive inactive firing" {
		t.Errorf("states %s", got)
	}
	if got := strings.Join(events, " "); got != "raised@2 cleared@5 raised@7" {
		t.Errorf("events %s", got)
	}
}

// A per-instance alarm keeps one state per pump; an instance that never
// left inactive has no row. Derived statistics are served: a sum as one
// value, a per-instance rate as Derived/<name>/<pump>/value.
func TestPerInstanceAlarmAndDerivedServed(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	ds := []Derived{{Name: "total", X: mustParse(t, "sum(Pumps/*/load)"), Units: "percent", Scale: 1},
		{Name: "perflow", X: mustParse(t, "Pumps/*/flow * 2"), Descr: "Twice the flow"}}
	as := []Alarm{{Name: "each", X: mustParse(t, "Pumps/*/load >= 50"), For: 1, Keep: 1}}
	e, err := New(ds, as, c.now)
	if err != nil {
		t.Fatal(err)
	}
	e.Evaluate(pumps(t, c.t, map[string]int64{"p1": 10, "p2": 60, "p3": 20}, map[string]uint64{"p1": 0, "p2": 100, "p3": 5}))
	c.t = c.t.Add(10 * time.Second)
	src := pumps(t, c.t, map[string]int64{"p1": 10, "p2": 70, "p3": 55}, map[string]uint64{"p1": 10, "p2": 300, "p3": 5})
	evs, trs := e.Evaluate(src)
	if len(evs) != 1 || evs[0].Instance != "p3" || len(trs) != 1 {
		t.Errorf("events %+v transitions %+v, want p3 raised only (p2 fired at the first)", evs, trs)
	}
	rows := e.Rows()
	if len(rows) != 2 || rows[0].Instance != "p2" || rows[1].Instance != "p3" || rows[1].State != Firing {
		t.Errorf("rows %+v, want p2 and p3 firing", rows)
	}
	b := spmi.NewBuilder(asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1}, nil, c.t)
	if err := (Provider{E: e}).Collect(b); err != nil {
		t.Fatal(err)
	}
	if err := (AlarmProvider{E: e}).Collect(b); err != nil {
		t.Fatal(err)
	}
	s := b.Finish()
	want := map[string]string{"Derived/total/value": "135", "Derived/perflow/p1/value": "2", "Derived/perflow/p2/value": "40",
		"Derived/perflow/p3/value": "0", "Alarm/2/instance": "p3", "Alarm/2/state": "firing"}
	for p, w := range want {
		it := s.Answer().Item(p)
		if it.Err != nil {
			t.Errorf("%s: %v", p, it.Err)
			continue
		}
		if got := it.Value.String(); got != w {
			t.Errorf("%s = %s, want %s", p, got, w)
		}
	}
	// A per-instance statistic's instances are numbered as their source's.
	for _, p := range []string{"p1", "p2", "p3"} {
		d, err1 := s.Lookup("Derived/perflow/" + p + "/")
		o, err2 := src.Lookup("Pumps/" + p + "/")
		if err1 != nil || err2 != nil || d.ASN != o.ASN {
			t.Errorf("Derived/perflow/%s/ numbered %v, its pump %v (%v %v)", p, d, o, err1, err2)
		}
	}
	if n, err := s.Lookup("Derived/total/value"); err == nil && (n.Stat.Units != "percent" || n.Stat.Scale != 1) {
		t.Errorf("Derived/total/value units %q scale %d, want percent 1", n.Stat.Units, n.Stat.Scale)
	}
}

// A reload that keeps an alarm's definition keeps its states: nothing
// raised again; a changed one starts over.
func TestReplaceKeepsUnchangedAlarms(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	a := Alarm{Name: "hot", X: mustParse(t, "Pumps/p1/load > 80"), For: 1, Keep: 1}
	e, _ := New(nil, []Alarm{a}, c.now)
	if _, evs := run(t, e, c, 90); len(evs) != 1 {
		t.Fatalf("events %v, want one raise", evs)
	}
	a.X = mustParse(t, "Pumps/p1/load > 80")
	if err := e.Replace(nil, []Alarm{a}); err != nil {
		t.Fatal(err)
	}
	if st, evs := run(t, e, c, 90); len(evs) != 0 || st[0] != "firing" {
		t.Errorf("after an unchanged reload: %v %v, want firing and no event", st, evs)
	}
	a.Severity = 3
	e.Replace(nil, []Alarm{a})
	if _, evs := run(t, e, c, 90); len(evs) != 1 {
		t.Errorf("after a changed reload: events %v, want a raise of the new alarm", evs)
	}
}

func TestCheckRefuses(t *testing.T) {
	x := mustParse(t, "Pumps/p1/load")
	r, f := 1.0, 2.0
	cases := []struct {
		d    []Derived
		a    []Alarm
		want string
	}{
		{nil, []Alarm{{Name: "a", X: x, For: 0, Keep: 1}}, "for: 0"},
		{nil, []Alarm{{Name: "a", X: x, For: 1, Keep: 0}}, "keep: 0"},
		{nil, []Alarm{{Name: "a", X: x, For: 1, Keep: 1, Rising: &r, Falling: &f}}, "above rising"},
		{nil, []Alarm{{Name: "a", X: x, For: 1, Keep: 1, Falling: &f}}, "needs rising"},
		{[]Derived{{Name: "a", X: x}}, []Alarm{{Name: "a", X: x, For: 1, Keep: 1}}, "already the name"},
		{[]Derived{{Name: "9x", X: x}}, nil, "name"},
		{[]Derived{{Name: "x", X: x, Scale: 7}}, nil, "scale"},
	}
	for _, c := range cases {
		if err := Check(c.d, c.a); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check(%+v, %+v) = %v, want %q", c.d, c.a, err, c.want)
		}
	}
}

// frequency 5s (five evaluations here): a second raise within it fires
// without an event, and its clear has none either; a raise after it is
// notified again.
func TestAlarmFrequency(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	a := Alarm{Name: "fr", X: mustParse(t, "Pumps/p1/load > 80"), For: 1, Keep: 1, Cleared: true, Frequency: 5 * time.Second}
	e, err := New(nil, []Alarm{a}, c.now)
	if err != nil {
		t.Fatal(err)
	}
	states, events := run(t, e, c, 90, 10, 90, 10, 10, 10, 90, 10)
	if got := strings.Join(states, " "); got != "firing inactive firing inactive inactive inactive firing inactive" {
		t.Errorf("states %s", got)
	}
	if got := strings.Join(events, " "); got != "raised@1 cleared@2 raised@7 cleared@8" {
		t.Errorf("events %s, want raised@1 cleared@2 raised@7 cleared@8 (the raise at 3 within 5s of 1)", got)
	}
	bad := a
	bad.Frequency = 1500 * time.Millisecond
	if err := Check(nil, []Alarm{bad}); err == nil || !strings.Contains(err.Error(), "frequency") {
		t.Errorf("a frequency of 1.5s: %v", err)
	}
}
