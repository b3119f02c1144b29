package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/mib/mibtest"
)

const alarmYAML = `hotset:
  interval: 1s
hotsets:
  - name: pumpalarm
    stat: DDS/Acme/Pumps/*/load
    maxresp: 1
    threshold: 80
    rearm: 50
    cleared: true
    frequency: 5m
    feed_type: none
    excp_type: trap
    trap_no: 1
traps:
  - {address: TRAPD, version: v2c, community: public, inform: true, retries: 2, timeout: 1s}
`

// waitCount polls snmptrapd's log until sub appears n times (bounded).
func waitCount(t *testing.T, d *snmpdtest.Trapd, sub string, n int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if strings.Count(d.Log(), sub) >= n {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("snmptrapd logged %q %d times within %v, want %d:\n%s", sub, strings.Count(d.Log(), sub), within, n, d.Log())
}

// A supplier's load driven up, down and up across the rising (80) and
// falling (50) thresholds gives exactly raised, cleared, raised in
// snmptrapd, with a daemon restart between the clear and the second
// raise, and the notification log read with snmptable holds the same
// three, in order, with their outcomes (informs acknowledged) and
// VarBinds.
func TestAlarmRaiseClearRaiseAcrossRestart(t *testing.T) {
	mibtest.Require(t, "snmptable", "snmptranslate")
	s := snmpdtest.Start(t, snmpdtest.Options{})
	trapAddr := snmpdtest.FreeUDPAddr(t)
	e := newEnv(t)
	file := filepath.Join(t.TempDir(), "subagent.yaml")
	if err := os.WriteFile(file, []byte(strings.Replace(alarmYAML, "TRAPD", trapAddr, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	trapd := snmpdtest.StartTrapdWith(t, snmpdtest.TrapdOptions{Addr: trapAddr, MIBDirs: shippedDirs(t), Modules: []string{"SUBAGENT-MIB"}})
	e.start("--config", file, "--agentx", s.AgentXAddress)
	waitServed(t, s, idleOID, 10*time.Second)
	sup, loads, _ := pumpSupplier(t, e)
	setLoads(sup, loads, 10, 10, 10)
	waitValue(t, e, "Hotset/pumpalarm/groups", "1", 15*time.Second)

	const raised, cleared = "OID: SUBAGENT-MIB::hotsetTrap1\t", "OID: SUBAGENT-MIB::hotsetCleared\t"
	setLoads(sup, loads, 90, 10, 10)
	waitCount(t, trapd, raised, 1, 15*time.Second)
	setLoads(sup, loads, 60, 10, 10) // between: nothing
	setLoads(sup, loads, 40, 10, 10)
	waitCount(t, trapd, cleared, 1, 15*time.Second)

	if err := e.stop(); err != nil {
		t.Fatalf("daemon stop: %v", err)
	}
	e.start("--config", file, "--agentx", s.AgentXAddress)
	waitServed(t, s, idleOID, 10*time.Second)
	// The supplier notices the restart and registers again.
	for deadline := time.Now().Add(30 * time.Second); getValue(t, e, "Hotset/pumpalarm/groups") != "1"; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the supplier did not register again within 30s")
		}
		sup.Check()
	}
	setLoads(sup, loads, 95, 10, 10)
	waitCount(t, trapd, raised, 2, 15*time.Second)

	log := trapd.Log()
	first, clr, second := strings.Index(log, raised), strings.Index(log, cleared), strings.LastIndex(log, raised)
	if !(first < clr && clr < second) || strings.Count(log, cleared) != 1 || strings.Count(log, raised) != 2 {
		t.Fatalf("snmptrapd got raised@%d cleared@%d raised@%d (%d cleared, %d raised), want raised, cleared, raised:\n%s",
			first, clr, second, strings.Count(log, cleared), strings.Count(log, raised), log)
	}
	if vbs := trapd.VarBinds(cleared); len(vbs) != 1 || !strings.Contains(strings.Join(vbs[0], "\t"), "hotsetPeerName.0 = STRING: p1\t") ||
		!strings.Contains(strings.Join(vbs[0], "\t"), "hotsetPeerValue.0 = STRING: 40\t") || !strings.Contains(strings.Join(vbs[0], "\t"), "hotsetRearm.0 = INTEGER: 50") {
		t.Errorf("cleared notification does not name p1, its value 40 and the rearm 50: %q", vbs)
	}

	// The log, through snmpd, in order; the outcome of the inform is
	// recorded (wait for the last acknowledgement).
	base := "1.3.6.1.4.1.32473.1.0."
	var rows map[string]map[string]string
	deadline := time.Now().Add(15 * time.Second)
	for {
		rows = snmptable(t, "udp:"+s.Addr, s.Community, "notifLogEntryTable")
		if r := rows["3"]; r != nil && strings.Contains(r["notifLogEntryOutcome"], "acknowledged") || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	want := []string{base + "1", base + "32768", base + "1"}
	for i, w := range want {
		r := rows[string(rune('1'+i))]
		if r == nil || r["notifLogEntryOid"] != w || !strings.Contains(r["notifLogEntryOutcome"], "inform "+trapAddr+": acknowledged") {
			t.Errorf("log entry %d: %v, want OID %s acknowledged by %s", i+1, r, w, trapAddr)
		}
	}
	if len(rows) != 3 {
		t.Errorf("log has %d entries, want 3: %v", len(rows), rows)
	}
	if r := rows["1"]; r != nil && !strings.HasPrefix(r["notifLogEntryUptime"], "0 ") {
		t.Errorf("an entry of the run before the restart serves uptime %q, want 0 (RFC 3014)", r["notifLogEntryUptime"])
	}
	vars := snmptable(t, "udp:"+s.Addr, s.Community, "notifLogEntryVarTable")
	var names []string
	for _, r := range vars {
		if strings.HasSuffix(r["notifLogEntryVarOid"], ".14.0.5.0") { // hotsetPeerName.0
			names = append(names, r["notifLogEntryVarValue"])
		}
	}
	if len(names) != 3 || strings.Join(names, ",") != "p1,p1,p1" {
		t.Errorf("hotsetPeerName VarBinds in the log: %q, want p1 in each of the 3 entries\n%v", names, vars)
	}
}
