package mib_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/mib"
	"github.com/perfagent/subagent/spmi"
)

// namedTree has two continuously instantiable contexts with the same
// shape: App, whose instances keep their names (as ARM applications do),
// and Pid, whose instances do not.
func namedTree(t *testing.T) *spmi.Snapshot {
	t.Helper()
	b := spmi.NewBuilder(testBase, nil, time.Unix(0, 0))
	var err error
	stat := []spmiwire.StatDesc{{Name: "count", Descr: "Completions", ASN: 3, Max: 100, Val: ddswire.SiCounter}}
	for _, top := range []struct {
		name  string
		asn   uint32
		named bool
	}{{"App", 13, true}, {"Pid", 14, false}} {
		cx, e := b.Context(nil, &spmi.CxDesc{Name: top.name, Descr: top.name + " things", ASN: top.asn, Inst: ddswire.SiContInst, Named: top.named})
		err = errors.Join(err, e)
		inst, e := b.Instance(cx, &spmi.CxDesc{Descr: "One", Inst: ddswire.SiContInst, Named: top.named}, "Payroll", "", 6)
		err = errors.Join(err, e)
		tran, e := b.Context(inst, &spmi.CxDesc{Name: "Lookup", Descr: "A lookup", ASN: 1})
		err = errors.Join(err, e)
		err = errors.Join(err, b.Stats(tran, stat, []spmiwire.Value{spmiwire.Uint(7)}))
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Finish()
}

// Instances of a named context are declared with their statistics, from
// the snapshot and from the daemon's peek alike; those of an unnamed one
// are only described.
func TestNamedContinuousInstancesAreDeclared(t *testing.T) {
	s := namedTree(t)
	entries, err := spmi.Peek(s, "")
	if err != nil {
		t.Fatal(err)
	}
	fromPeek, err := mib.FromEntries(entries)
	if err != nil {
		t.Fatal(err)
	}
	for name, tree := range map[string]mib.Tree{"snapshot": mib.FromSnapshot(s), "peek": fromPeek} {
		m := generate(t, tree, mib.Options{Instances: true})
		objs := byPath(m)
		if o, ok := objs["App/Payroll/Lookup/count"]; !ok || o.Name != "appPayrollLookupCount" {
			t.Errorf("%s: App/Payroll/Lookup/count declared as %+v, want appPayrollLookupCount", name, o)
		}
		if _, ok := objs["Pid/Payroll/Lookup/count"]; ok {
			t.Errorf("%s: an instance of the unnamed continuous context was declared", name)
		}
		text := strings.Join(strings.Fields(string(m.Text)), " ")
		if n := strings.Count(text, "Its instances come and go, each keeping its name and number."); n != 1 {
			t.Errorf("%s: %d contexts say their instances keep their names, want 1 (App)", name, n)
		}
		if n := strings.Count(text, "Its instances come and go continuously, so they are not declared"); n != 1 {
			t.Errorf("%s: %d contexts say their instances are not declared, want 1 (Pid)", name, n)
		}
	}
}
