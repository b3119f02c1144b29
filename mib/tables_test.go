package mib_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/mib"
	"github.com/perfagent/subagent/mib/mibtest"
	"github.com/perfagent/subagent/spmi"
)

// nestedProvider adds applications with transactions (rows of rows), as
// RTime/ARM has them.
type nestedProvider struct{}

func (nestedProvider) Name() string { return "nested" }

func (nestedProvider) Collect(b *spmi.Builder) error {
	apps, err := b.Context(nil, &spmi.CxDesc{Name: "App", Descr: "Applications", ASN: 20, Inst: ddswire.SiContInst, Named: true})
	if err != nil {
		return err
	}
	tpl := &spmi.CxDesc{Descr: "Application", Inst: ddswire.SiContInst, Named: true, RowName: "tran"}
	count := spmiwire.StatDesc{Name: "count", Descr: "Transactions", ASN: 3, Max: 100, Val: ddswire.SiCounter}
	for i, name := range []string{"web", "batch"} {
		a, e := b.Instance(apps, tpl, name, "", uint32(i+1))
		err = errors.Join(err, e)
		t, e := b.Context(a, &spmi.CxDesc{Name: "login", Descr: "Logins", ASN: 7})
		err = errors.Join(err, e, b.Stat(t, &count, spmiwire.Uint(uint64(10*(i+1)))))
	}
	return err
}

func tablesSnapshot(t *testing.T) *spmi.Snapshot {
	t.Helper()
	b := spmi.NewBuilder(testBase, nil, time.Unix(0, 0))
	if err := errors.Join((syntheticProvider{}).Collect(b), (nestedProvider{}).Collect(b)); err != nil {
		t.Fatal(err)
	}
	return b.Finish()
}

// The default module names instances only through tables: their
// descriptors, INDEX clauses and columns, linted clean, and net-snmp
// names every cell the daemon serves.
func TestTablesDeclaredAndNamingEveryCell(t *testing.T) {
	s := tablesSnapshot(t)
	m := generate(t, mib.FromSnapshot(s), mib.Options{})
	text := string(m.Text)
	for _, want := range []string{
		"cpuTable OBJECT-TYPE\n    SYNTAX      SEQUENCE OF CpuEntry",
		"INDEX       { cpuIndex }",
		"CpuEntry ::= SEQUENCE {\n    cpuIndex Unsigned32,\n    cpuName DisplayString,\n    cpuDescr DisplayString,\n    cpuUser Counter64,\n    cpuIdle ScaledGauge2\n}",
		// A process's "name" statistic keeps its word; the instance's columns say Inst.
		"procPidInstName OBJECT-TYPE", "procPidName OBJECT-TYPE", "procPidNice OBJECT-TYPE\n    SYNTAX      Integer32",
		// Rows of rows: indexed by the application, then the transaction.
		"appTranTable OBJECT-TYPE", "INDEX       { appIndex, appTranIndex }", "appTranCount OBJECT-TYPE",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("module lacks %q", want)
		}
	}
	for _, not := range []string{"cpuCpu0User", "procPid4242", "appWeb"} {
		if strings.Contains(text, not) {
			t.Errorf("module declares the instance name %s", not)
		}
	}
	mibtest.Require(t, "smilint", "snmptranslate")
	file, dirs := writeModule(t, m)
	mibtest.LintClean(t, file, dirs)
	// Every table cell of the view translates to column.index.
	want := map[string]string{}
	tables := testBase.Append(spmi.TablesArc)
	for i := range s.Values().Len() {
		o, _ := s.Values().At(i)
		if o.HasPrefix(tables) {
			want["."+o.String()] = ""
		}
	}
	if len(want) < 20 {
		t.Fatalf("only %d cells in the table view", len(want))
	}
	var oids []string
	for o := range want {
		oids = append(oids, o)
	}
	got := mibtest.Translate(t, mibtest.NetSNMPEnv(t), dirs, m.Name, nil, oids)
	for i, name := range got {
		w := map[string]string{
			".1.3.6.1.4.1.32473.1.200.1.1.1.14.2":    "SUBAGENT-MIB::cpuIdle.2",
			".1.3.6.1.4.1.32473.1.200.1.1.1.2.0":     "SUBAGENT-MIB::cpuName.0",
			".1.3.6.1.4.1.32473.1.201.1.20.1.13.2.7": "SUBAGENT-MIB::appTranCount.2.7",
		}[oids[i]]
		switch {
		case w != "" && name != w:
			t.Errorf("%s translates to %s, want %s", oids[i], name, w)
		case !strings.HasPrefix(name, "SUBAGENT-MIB::") || strings.Count(name, ".") > 2 || strings.Contains(name, "Tables"):
			t.Errorf("%s translates to %s: not a column with its index", oids[i], name)
		}
	}
}

// Instances as scalars on request, beside the tables.
func TestInstancesOnRequest(t *testing.T) {
	m := generate(t, mib.FromSnapshot(tablesSnapshot(t)), mib.Options{Instances: true})
	for _, want := range []string{"\ncpuCpu0User OBJECT-TYPE", "\ncpuUser OBJECT-TYPE", "\nappWebLoginCount OBJECT-TYPE"} {
		if !strings.Contains(string(m.Text), want) {
			t.Errorf("module lacks %q", want)
		}
	}
	_ = asn1tree.OID{}
}
