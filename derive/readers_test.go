package derive

import (
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/spmi"
)

// pumpsProvider serves addPumps' Pumps with fixed loads.
type pumpsProvider map[string]int64

func (p pumpsProvider) Name() string { return "Pumps" }

func (p pumpsProvider) Collect(b *spmi.Builder) error { return addPumps(b, p, nil) }

// TestReadersDoNotWaitForEvaluation holds an evaluation inside the
// engine (its clock blocks until released) and meanwhile reads what the
// readers read: a request's reading of the hierarchy (what an SNMP GET
// that finds the values old waits for) and a derived value from it, the
// Alarm table's rows, Agent/expr and the errors. Each must be answered,
// with the last evaluation's results, while the evaluation is still held.
func TestReadersDoNotWaitForEvaluation(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	held, release := make(chan struct{}), make(chan struct{})
	hold := false // read and written by the evaluating goroutine only
	now := func() time.Time {
		if hold {
			hold = false
			close(held)
			<-release
		}
		return t0
	}
	e, err := New([]Derived{{Name: "total", X: mustParse(t, "sum(Pumps/*/load)")}},
		[]Alarm{{Name: "hot", X: mustParse(t, "Pumps/*/load > 50"), For: 1, Keep: 1}}, now)
	if err != nil {
		t.Fatal(err)
	}
	h := spmi.NewHierarchy(spmi.Config{Base: asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1}, MinAge: time.Hour})
	h.Add(pumpsProvider{"p1": 70, "p2": 5})
	h.Add(Provider{E: e})
	h.Add(AlarmProvider{E: e})
	e.Evaluate(h.Fresh())
	h.Invalidate()
	if v := value(t, h.Fresh(), "Derived/total/value"); v != "75" {
		t.Fatalf("Derived/total/value %s after the first evaluation, want 75", v)
	}

	evaluated := make(chan struct{})
	go func() {
		defer close(evaluated)
		hold = true
		e.Evaluate(pumps(t, t0.Add(time.Second), map[string]int64{"p1": 90, "p2": 90}, nil))
	}()
	<-held
	read := make(chan string)
	go func() {
		h.Invalidate()
		v := value(t, h.FreshWithin(time.Hour), "Derived/total/value")
		rows, errs := e.Rows(), e.Errors()
		b := spmi.NewBuilder(asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1}, nil, t0)
		agent, err := b.Context(nil, &spmi.CxDesc{Name: "Agent", Descr: "Agent", ASN: 12})
		if err == nil {
			err = e.AgentStats(b, agent)
		}
		if err != nil {
			t.Error(err)
		}
		if len(rows) != 1 || rows[0].Instance != "p1" || rows[0].State != Firing || len(errs) != 0 {
			t.Errorf("rows %+v, errors %v: want p1 firing, no error", rows, errs)
		}
		read <- v
	}()
	select {
	case v := <-read:
		if v != "75" {
			t.Errorf("Derived/total/value %s while the second evaluation is held, want the first's 75", v)
		}
	case <-time.After(time.Minute):
		t.Error("a reader waited for the evaluation held")
	}
	close(release)
	<-evaluated
	if v := value(t, h.Fresh(), "Derived/total/value"); v != "180" {
		t.Errorf("Derived/total/value %s after the second evaluation, want 180", v)
	}
}

// value is the statistic at path in s, as text.
func value(t *testing.T, s *spmi.Snapshot, path string) string {
	it := s.Answer().Item(path)
	if it.Err != nil {
		t.Error(it.Err)
		return ""
	}
	return it.Value.String()
}
