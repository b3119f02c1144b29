package spmi

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
)

var (
	appsCx  = CxDesc{Name: "ARM", Descr: "Applications", ASN: 1, Inst: ddswire.SiContInst, Named: true}
	appTpl  = CxDesc{Descr: "Application", Inst: ddswire.SiContInst, Named: true}
	rtCx    = CxDesc{Name: "RTime", Descr: "Response times", ASN: 13}
	countSt = spmiwire.StatDesc{Name: "count", Descr: "Count", ASN: 3, Max: 100, Val: ddswire.SiCounter}
	totalCx = CxDesc{Name: "total", Descr: "All processors", ASN: 0}
)

// addCPU adds CPU with total (0: idle 300) and two processors (idle 100
// and 200).
func addCPU(t *testing.T, b *Builder, total *CxDesc) {
	t.Helper()
	cpu, err := b.Context(nil, &cpuCx)
	if err != nil {
		t.Fatal(err)
	}
	tot, err := b.Context(cpu, total)
	if err == nil {
		err = b.Stat(tot, &idle, spmiwire.Uint(300))
	}
	for i := 0; err == nil && i < 2; i++ {
		var c *Node
		if c, err = b.Instance(cpu, &cpuInst, fmt.Sprintf("cpu%d", i), "", uint32(i+1)); err == nil {
			err = b.Stat(c, &idle, spmiwire.Uint(uint64(100*(i+1))))
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

// tableTree: CPU with total (0) and two processors; RTime/ARM with two
// applications, one of them with two transactions.
func tableTree(t *testing.T, v Views) *Snapshot {
	t.Helper()
	b := NewBuilder(testBase, nil, time.Now())
	b.SetViews(v)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	addCPU(t, b, &totalCx)
	rt, err := b.Context(nil, &rtCx)
	must(err)
	arm, err := b.Context(rt, &appsCx)
	must(err)
	app, err := b.Instance(arm, &appTpl, "web", "", 5)
	must(err)
	for i, name := range []string{"login", "search"} {
		tr, err := b.Context(app, &CxDesc{Name: name, Descr: "Transaction " + name, ASN: uint32(7 + i)})
		must(err)
		must(b.Stat(tr, &countSt, spmiwire.Uint(uint64(10+i))))
	}
	_, err = b.Instance(arm, &appTpl, "batch", "", 6)
	must(err)
	return b.Finish()
}

func walk(s *Snapshot, prefix string) []string {
	p := testBase.Append(asn1tree.MustParse(prefix)...)
	var out []string
	for i := range s.Values().Len() {
		o, v := s.Values().At(i)
		if o.HasPrefix(p) {
			out = append(out, o[len(p):].String()+"="+v.String())
		}
	}
	return out
}

func TestTableViewRowsAndNestedRows(t *testing.T) {
	s := tableTree(t, ViewBoth)
	cpu := strings.Join(walk(s, "200.1.1.1"), " ")
	want := `2.0="total" 2.1="cpu0" 2.2="cpu1" 3.0="All processors" 3.1="Processor" 3.2="Processor" 14.0=300 14.1=100 14.2=200`
	if cpu != want {
		t.Errorf("CPU table:\n got %s\nwant %s", cpu, want)
	}
	apps := strings.Join(walk(s, "200.2.13.1.1"), " ")
	if want := `2.5="web" 2.6="batch" 3.5="Application" 3.6="Application"`; apps != want {
		t.Errorf("applications table:\n got %s\nwant %s", apps, want)
	}
	trans := strings.Join(walk(s, "201.2.13.1.1"), " ")
	if want := `2.5.7="login" 2.5.8="search" 3.5.7="Transaction login" 3.5.8="Transaction search" 13.5.7=10 13.5.8=11`; trans != want {
		t.Errorf("transactions table:\n got %s\nwant %s", trans, want)
	}
	// The scalars are still there.
	if got := walk(s, "1.1.4"); len(got) != 1 || got[0] != "0=100" {
		t.Errorf("scalar CPU/cpu0/idle: %v", got)
	}
}

func TestViewsSetting(t *testing.T) {
	s := tableTree(t, ViewTables)
	if got := walk(s, "1"); len(got) != 0 {
		t.Errorf("tables only: scalars of rows served: %v", got)
	}
	if got := walk(s, "200.1.1.1.14"); len(got) != 3 {
		t.Errorf("tables only: CPU idle column %v", got)
	}
	s = tableTree(t, ViewScalars)
	if got := walk(s, "200"); len(got) != 0 {
		t.Errorf("scalars only: tables served: %v", got)
	}
	if got := walk(s, "1"); len(got) != 3 {
		t.Errorf("scalars only: %v", got)
	}
}

func TestTableEntryOID(t *testing.T) {
	if got := TableEntry(0, asn1tree.OID{10, 100}).String(); got != "200.2.10.100.1" {
		t.Errorf("TableEntry(0, 10.100) = %s", got)
	}
	if got := TableEntry(1, asn1tree.OID{13, 1}).String(); got != "201.2.13.1.1" {
		t.Errorf("TableEntry(1, 13.1) = %s", got)
	}
}

// A context numbered above the table view's arcs is merged in order.
func TestTablesMergeWithAContextAboveThem(t *testing.T) {
	b := NewBuilder(testBase, nil, time.Now())
	cpu, _ := b.Context(nil, &cpuCx)
	c0, _ := b.Instance(cpu, &cpuInst, "cpu0", "", 1)
	b.Stat(c0, &idle, spmiwire.Uint(5))
	high, err := b.Context(nil, &CxDesc{Name: "High", Descr: "Numbered above the tables", ASN: 300})
	if err != nil {
		t.Fatal(err)
	}
	b.Stat(high, &spmiwire.StatDesc{Name: "x", Descr: "x", ASN: 1, Max: 1, Val: ddswire.SiQuantity}, spmiwire.Uint(9))
	s := b.Finish()
	if got := walk(s, "300.1"); len(got) != 1 || got[0] != "0=9" {
		t.Errorf("context above the tables: %v", got)
	}
	if got := walk(s, "200.1.1.1.14"); len(got) != 1 || got[0] != "1=5" {
		t.Errorf("CPU idle cell: %v", got)
	}
}
