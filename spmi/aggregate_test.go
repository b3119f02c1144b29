package spmi

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/spmiwire"
)

// aggTree: CPU with an aggregate total (0, the sum) and two processors.
func aggTree(t *testing.T, v Views) *Snapshot {
	t.Helper()
	b := NewBuilder(testBase, nil, time.Now())
	b.SetViews(v)
	addCPU(t, b, &CxDesc{Name: "total", Descr: "All processors", ASN: 0, Aggregate: true})
	return b.Finish()
}

// An aggregate is served apart from the rows in every view: its
// statistics are scalars, the table holds the instances only, so that a
// sum over a column is the aggregate's value.
func TestAggregateIsNoRow(t *testing.T) {
	for _, v := range []Views{ViewScalars, ViewTables, ViewBoth} {
		s := aggTree(t, v)
		if got := strings.Join(walk(s, "1.0"), " "); got != "4.0=300" {
			t.Errorf("views %d: CPU/total/idle scalar: %q, want 4.0=300", v, got)
		}
		cells := walk(s, "200.1.1.1")
		if v == ViewScalars {
			if len(cells) != 0 {
				t.Errorf("scalars only: table cells %v", cells)
			}
			continue
		}
		if want := `2.1="cpu0" 2.2="cpu1" 3.1="Processor" 3.2="Processor" 14.1=100 14.2=200`; strings.Join(cells, " ") != want {
			t.Errorf("views %d: CPU table:\n got %s\nwant %s", v, strings.Join(cells, " "), want)
		}
		var sum uint64
		for _, c := range walk(s, "200.1.1.1.14") {
			var idx, val uint64
			if _, err := fmt.Sscanf(c, "%d=%d", &idx, &val); err != nil {
				t.Fatalf("cell %q: %v", c, err)
			}
			sum += val
		}
		if sum != 300 {
			t.Errorf("views %d: idle column sums to %d, the aggregate is 300", v, sum)
		}
		tot, err := s.Lookup("CPU/total/idle")
		if err != nil {
			t.Fatal(err)
		}
		if c := tot.Cell(); c != nil {
			t.Errorf("views %d: the aggregate's statistic has the cell %s", v, c)
		}
		if !tot.Parent.Aggregate() || tot.Parent.Instance {
			t.Errorf("views %d: CPU/total: Aggregate %v, Instance %v", v, tot.Parent.Aggregate(), tot.Parent.Instance)
		}
	}
}

// The aggregate is no peer of the instances, and peek says what it is.
func TestAggregatePeersAndPeek(t *testing.T) {
	s := aggTree(t, ViewBoth)
	peers, err := s.Peers("CPU", "idle")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, p := range peers {
		paths = append(paths, p.Path)
	}
	if got := strings.Join(paths, " "); got != "CPU/cpu0/idle CPU/cpu1/idle" {
		t.Errorf("peers of CPU idle: %s", got)
	}
	es, err := Peek(s, "CPU")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if want := e.Path == "CPU/total/"; e.Aggregate != want {
			t.Errorf("peek %s: aggregate %v", e.Path, e.Aggregate)
		}
	}
	// An instance whose template says Aggregate is an instance all the
	// same: only a permanent context sums its siblings.
	b := NewBuilder(testBase, nil, time.Now())
	cpu, _ := b.Context(nil, &cpuCx)
	in, err := b.Instance(cpu, &CxDesc{Descr: "odd template", Aggregate: true}, "cpu0", "", 1)
	if err != nil {
		t.Fatal(err)
	}
	b.Stat(in, &idle, spmiwire.Uint(7))
	s = b.Finish()
	if got := strings.Join(walk(s, "200.1.1.1.14"), " "); got != "1=7" {
		t.Errorf("instance with an aggregate template is not a row: %q", got)
	}
}
