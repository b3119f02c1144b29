package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/internal/snmpdtest"
)

// derivedDefTable (base.110.3) and alarmDefTable (base.110.4).
const (
	derivedDefEntry = writableOID + ".3.1"
	alarmDefEntry   = writableOID + ".4.1"
)

func defCol(entry string, col int, name string) string {
	return fmt.Sprintf("%s.%d.%s", entry, col, nameIndex(name))
}

// derivedSet is a derived statistic row with createAndGo.
func derivedSet(name, expr, storage string) []string {
	return []string{
		defCol(derivedDefEntry, 2, name), "s", expr,
		defCol(derivedDefEntry, 3, name), "s", "Load of all pumps",
		defCol(derivedDefEntry, 7, name), "i", storage,
		defCol(derivedDefEntry, 8, name), "i", "4",
	}
}

// alarmSet is an alarm row with createAndGo: pump p1's load from rising
// up, held 2 evaluations, severity 4, cleared notified, 10 minutes
// between notified raises.
func alarmSet(name, rising, storage string) []string {
	return []string{
		defCol(alarmDefEntry, 2, name), "s", "DDS/Acme/Pumps/p1/load",
		defCol(alarmDefEntry, 3, name), "i", "2",
		defCol(alarmDefEntry, 5, name), "i", "4",
		defCol(alarmDefEntry, 6, name), "s", rising,
		defCol(alarmDefEntry, 7, name), "s", "70",
		defCol(alarmDefEntry, 8, name), "i", "1",
		defCol(alarmDefEntry, 9, name), "i", "600", // frequency
		defCol(alarmDefEntry, 10, name), "i", storage,
		defCol(alarmDefEntry, 11, name), "i", "4",
	}
}

func rowStatus(t *testing.T, s *snmpdtest.Snmpd, oid string) string {
	t.Helper()
	vs, err := s.Get(oid)
	if err != nil || len(vs) != 1 {
		t.Fatalf("get %s: %v", oid, err)
	}
	if vs[0].Value == "" {
		return vs[0].Type // noSuchInstance
	}
	return vs[0].Value
}

const exprSetYAML = `expressions:
  interval: 1s
  max_snmp_alarms: 2
hotset:
  tree_changed_interval: 0
derived:
  - name: confsum
    expr: sum(DDS/Acme/Pumps/*/load)
`

// A manager creates a derived statistic and an alarm with snmpset
// through snmpd as an SNMPv3 authPriv user: the derived value is read
// through snmpd and equals its inputs' sum, the alarm's alarmRaised
// reaches snmptrapd. Invalid rows (a syntax error, a bad number, a name
// the other table or the configuration holds, rows beyond
// expressions.max_snmp_alarms) change nothing; nonVolatile rows come back
// after a restart, volatile ones do not; destroy removes the statistic.
func TestSNMPSetDerivedAndAlarmRows(t *testing.T) {
	trapd := snmpdtest.StartTrapd(t)
	s := writableSnmpd(t, trapd.Addr)
	e := newEnv(t)
	file := startConfigured(t, e, s, exprSetYAML)
	sup, loads, _ := pumpSupplier(t, e)
	setLoads(sup, loads, 10, 20, 30)
	waitValue(t, e, "Derived/confsum/value", "60", 15*time.Second)

	if out, err := snmpset(s, v3Opts, derivedSet("pumpsum", "sum(DDS/Acme/Pumps/*/load) * 2", "3")...); err != nil {
		t.Fatalf("createAndGo of a derived statistic as %s: %v\n%s", setUser, err, out)
	}
	if out, err := snmpset(s, v3Opts, alarmSet("pumpsnmp", "80", "3")...); err != nil {
		t.Fatalf("createAndGo of an alarm as %s: %v\n%s", setUser, err, out)
	}
	waitValue(t, e, "Derived/pumpsum/value", "120", 15*time.Second)
	oidOf, _, _ := e.oids(t)
	oid := oidOf["Derived/pumpsum/value"]
	if oid == "" {
		t.Fatalf("Derived/pumpsum/value has no OID")
	}
	if vs, err := s.Get(oid); err != nil || len(vs) != 1 || vs[0].Value != "120" {
		t.Errorf("snmpget Derived/pumpsum/value through snmpd: %v %v, want 120", vs, err)
	}
	setLoads(sup, loads, 90, 20, 30)
	log, err := trapd.WaitFor(20*time.Second, "pumpsnmp")
	if err != nil {
		t.Fatalf("no notification of the alarm created over SNMP: %v\n%s", err, log)
	}
	if !strings.Contains(log, ".32770") || strings.Contains(log, ".32771") {
		t.Errorf("want alarmRaised (32770) and no alarmCleared yet:\n%s", log)
	}

	// Refused, nothing created: each reason is the manager's inconsistentValue.
	for what, set := range map[string][]string{
		"syntax error":         derivedSet("badexpr", "sum(DDS/Acme/Pumps/*/load", "3"),
		"rising not a number":  alarmSet("badrise", "eighty", "3"),
		"falling above rising": alarmSet("badfall", "60", "3"),
		"a derived's name":     alarmSet("pumpsum", "80", "3"),
		"a configured name":    alarmSet("confsum", "80", "3"),
	} {
		if out, err := snmpset(s, writerOpts, set...); err == nil || !strings.Contains(out, "inconsistentValue") {
			t.Errorf("%s: %v\n%s", what, err, out)
		}
	}
	for _, oid := range []string{defCol(derivedDefEntry, 8, "badexpr"), defCol(alarmDefEntry, 11, "badrise"), defCol(alarmDefEntry, 11, "badfall")} {
		if st := rowStatus(t, s, oid); st != "noSuchInstance" {
			t.Errorf("%s after a refused set: %s", oid, st)
		}
	}
	// The configured derived statistic is a readOnly row.
	if st := rowStatus(t, s, defCol(derivedDefEntry, 8, "confsum")); st != "1" {
		t.Errorf("confsum RowStatus %s, want active", st)
	}
	if out, err := snmpset(s, writerOpts, defCol(derivedDefEntry, 8, "confsum"), "i", "6"); err == nil || !strings.Contains(out, "wrongValue") {
		t.Errorf("destroy of a configured row: %v\n%s", err, out)
	}
	// max_snmp_alarms 2: a volatile second, then resourceUnavailable.
	if out, err := snmpset(s, writerOpts, alarmSet("volalarm", "95", "2")...); err != nil {
		t.Fatalf("second alarm: %v\n%s", err, out)
	}
	if out, err := snmpset(s, writerOpts, alarmSet("third", "95", "3")...); err == nil || !strings.Contains(out, "resourceUnavailable") {
		t.Errorf("third alarm beyond max_snmp_alarms 2: %v\n%s", err, out)
	}

	// Restart the daemon: the nonVolatile rows stay, the volatile goes.
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	e.start("--config", file, "--agentx", s.AgentXAddress)
	waitServed(t, s, idleOID, 10*time.Second)
	for oid, want := range map[string]string{defCol(derivedDefEntry, 8, "pumpsum"): "1", defCol(alarmDefEntry, 11, "pumpsnmp"): "1",
		defCol(alarmDefEntry, 11, "volalarm"): "noSuchInstance"} {
		if st := rowStatus(t, s, oid); st != want {
			t.Errorf("%s after a restart: %s, want %s", oid, st, want)
		}
	}
	if vs, err := s.Get(defCol(alarmDefEntry, 2, "pumpsnmp"), defCol(alarmDefEntry, 6, "pumpsnmp"), defCol(alarmDefEntry, 9, "pumpsnmp")); err != nil || len(vs) != 3 ||
		vs[0].Value != "DDS/Acme/Pumps/p1/load" || vs[1].Value != "80" || vs[2].Value != "600" {
		t.Errorf("pumpsnmp after a restart: %v %v", vs, err)
	}
	// The engine has it again (the supplier left with the daemon: no value).
	if _, ok := rtlGet(e, "Agent/expr/pumpsum/errmsg"); !ok {
		t.Errorf("pumpsum has no row of Agent/expr after a restart")
	}

	// destroy takes the statistic away.
	if out, err := snmpset(s, writerOpts, defCol(derivedDefEntry, 8, "pumpsum"), "i", "6"); err != nil {
		t.Fatalf("destroy: %v\n%s", err, out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, ok := rtlGet(e, "Derived/pumpsum/value"); !ok {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Errorf("Derived/pumpsum still served after destroy")
}

// docs/EXPRESSIONS.md's writes over SNMP, as printed, beside snmpd on
// localhost with the drop-in's SNMPv3 writer: both rows are created by
// number, and the tables read by name list them active with what was set.
func TestExpressionsDocSNMPWritesRunAsWritten(t *testing.T) {
	out, stderr := runDocWrites(t, "TestExpressionsDocSNMPWritesRunAsWritten", beside{})
	if strings.Contains(stderr, "Cannot find module") || strings.Contains(stderr, "Unknown Object Identifier") {
		t.Errorf("the named commands did not find the installed module:\n%s", stderr)
	}
	for _, want := range []string{
		`iso\.3\.6\.1\.4\.1\.32473\.1\.110\.3\.1\.8\.7\.109\.101\.109\.117\.115\.101\.100 = INTEGER: 4`,
		`iso\.3\.6\.1\.4\.1\.32473\.1\.110\.4\.1\.11\.6\.109\.101\.109\.108\.111\.119 = INTEGER: 4`,
		`\s*"?memused"?\s+"?Mem/Real/size - Mem/Real/free"?\s+KiB\s+0\s+false\s+nonVolatile\s+active`,
		`\s*"?memlow"?\s+"?Mem/Real/%free < 10"?\s+3( evaluations)?\s+1( evaluations)?\s+2\s+true\s+0( seconds)?\s+nonVolatile\s+active`,
	} {
		if !regexp.MustCompile(`(?m)^` + want).MatchString(out) {
			t.Errorf("the blocks' output lacks %s:\n%s\n%s", want, out, stderr)
		}
	}
}
