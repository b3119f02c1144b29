package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Rows waiting for activation have a limit of their own
// (snmp_set.max_waiting_rows), through the real snmpd: one manager (the
// v2c community) holding the most rows waiting gets resourceUnavailable
// for one more, and another manager's (the v3 user's) createAndGo still
// succeeds. Before, rows waiting counted against hotset.max_snmp_rows and
// one manager holding them locked every other out.
func TestSNMPSetWaitingRowsOwnLimit(t *testing.T) {
	s := writableSnmpd(t, "")
	e := newEnv(t)
	conf := strings.Replace(hotsetYAML, "  interval: 1s\n", "  interval: 1s\n  max_snmp_rows: 3\n", 1) +
		"snmp_set:\n  max_waiting_rows: 3\n  waiting_lifetime: 5m\n"
	startConfigured(t, e, s, conf)
	sup, loads, _ := pumpSupplier(t, e)
	setLoads(sup, loads, 10, 20, 30)
	waitValue(t, e, "Hotset/hotpumps/groups", "1", 10*time.Second)

	for i := range 3 {
		name := fmt.Sprint("wait", i)
		if out, err := snmpset(s, writerOpts, hotCol(11, name), "i", "5"); err != nil {
			t.Fatalf("createAndWait %s: %v\n%s", name, err, out)
		}
	}
	if out, err := snmpset(s, writerOpts, hotCol(11, "wait3"), "i", "5"); err == nil || !strings.Contains(out, "resourceUnavailable") {
		t.Errorf("a fourth row waiting with snmp_set.max_waiting_rows 3: %v\n%s", err, out)
	}
	for _, name := range []string{"go0", "go1", "go2"} {
		if out, err := snmpset(s, v3Opts, hotRow(name, "2")...); err != nil {
			t.Fatalf("another manager's createAndGo of %s beside 3 rows waiting: %v\n%s", name, err, out)
		}
		if st := statusOf(t, s, name); st != "1" {
			t.Errorf("%s: RowStatus %s, want active(1)", name, st)
		}
	}
	if out, err := snmpset(s, v3Opts, hotRow("go3", "2")...); err == nil || !strings.Contains(out, "resourceUnavailable") {
		t.Errorf("a fourth active row with hotset.max_snmp_rows 3: %v\n%s", err, out)
	}
	if st := statusOf(t, s, "wait0"); st != "3" {
		t.Errorf("wait0: RowStatus %s, want notReady(3)", st)
	}
}
