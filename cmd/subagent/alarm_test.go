package main

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/mib/mibtest"
	"github.com/perfagent/subagent/mib/schema"
)

// pumpAlarmYAML configures one hotset, pumpalarm, over the pumps' loads:
// raised (trap 1) past 80, cleared below 50, sent to the receiver trapd;
// hotset is one more setting of the hotset section ("" none), trap more
// settings of the receiver.
func pumpAlarmYAML(trapd, hotset, trap string) string {
	if hotset != "" {
		hotset = "\n  " + hotset
	}
	return `hotset:
  interval: 1s` + hotset + `
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
  - {address: ` + trapd + `, version: v2c, community: public` + trap + `}
`
}

// alarmEntries are the log's rows (by index, from snmptable) of the
// hotsets' notifications, oldest first: not the tree changed ones that
// a supplier registering sends too.
func alarmEntries(rows map[string]map[string]string) []map[string]string {
	treeChanged := "1.3.6.1.4.1.32473.1.0." + strconv.FormatUint(uint64(schema.TreeChangedNo), 10)
	var idx []int
	for k, r := range rows {
		if n, err := strconv.Atoi(k); err == nil && r["notifLogEntryOid"] != treeChanged {
			idx = append(idx, n)
		}
	}
	slices.Sort(idx)
	out := make([]map[string]string, len(idx))
	for i, n := range idx {
		out[i] = rows[strconv.Itoa(n)]
	}
	return out
}

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
	trapd := snmpdtest.StartTrapdWith(t, snmpdtest.TrapdOptions{Addr: trapAddr, MIBDirs: shippedDirs(t), Modules: []string{"SUBAGENT-MIB"}})
	e := newEnv(t)
	file := startConfigured(t, e, s, pumpAlarmYAML(trapAddr, "", ", inform: true, retries: 2, timeout: 1s"))
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
		if a := alarmEntries(rows); len(a) >= 3 && strings.Contains(a[2]["notifLogEntryOutcome"], "acknowledged") || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	alarms := alarmEntries(rows)
	want := []string{base + "1", base + "32768", base + "1"}
	for i, w := range want {
		var r map[string]string
		if i < len(alarms) {
			r = alarms[i]
		}
		if r == nil || r["notifLogEntryOid"] != w || !strings.Contains(r["notifLogEntryOutcome"], "inform "+trapAddr+": acknowledged") {
			t.Errorf("hotset log entry %d: %v, want OID %s acknowledged by %s", i+1, r, w, trapAddr)
		}
	}
	if len(alarms) != 3 {
		t.Errorf("log has %d hotset entries, want 3: %v", len(alarms), rows)
	}
	if len(alarms) > 0 && !strings.HasPrefix(alarms[0]["notifLogEntryUptime"], "0 ") {
		t.Errorf("an entry of the run before the restart serves uptime %q, want 0 (RFC 3014)", alarms[0]["notifLogEntryUptime"])
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

const missedYAML = `hotset:
  interval: 1s
hotsets:
  - {name: pumpa, stat: DDS/Acme/Pumps/*/load, maxresp: 1, threshold: 80, frequency: 5m, feed_type: none, excp_type: trap, trap_no: 1}
  - {name: pumpb, stat: DDS/Acme/Pumps/*/load, maxresp: 1, threshold: 70, frequency: 5m, feed_type: none, excp_type: trap, trap_no: 2}
  - {name: pumpc, stat: DDS/Acme/Pumps/*/load, maxresp: 1, threshold: 60, frequency: 5m, feed_type: none, excp_type: trap, trap_no: 3}
traps:
  - {address: TRAPD, version: v2c, community: public, inform: true, retries: 1, timeout: 1s}
`

// With no trap receiver listening, three alarms are raised: their informs
// fail, and once the receiver is started a manager reads all three from
// the notification log, each with its VarBinds (the hotset's name, the
// peer and its value) and the failed outcome of the inform.
func TestAlarmsMissedAreInTheLog(t *testing.T) {
	mibtest.Require(t, "snmptable", "snmptranslate")
	s := snmpdtest.Start(t, snmpdtest.Options{})
	trapAddr := snmpdtest.FreeUDPAddr(t) // nothing listens there yet
	e := newEnv(t)
	startConfigured(t, e, s, strings.Replace(missedYAML, "TRAPD", trapAddr, 1))
	sup, loads, _ := pumpSupplier(t, e)
	setLoads(sup, loads, 10, 10, 10)
	waitValue(t, e, "Hotset/pumpc/groups", "1", 15*time.Second)
	setLoads(sup, loads, 10, 95, 10)

	// Each inform fails after its retry; the log tells so.
	var rows map[string]map[string]string
	deadline := time.Now().Add(30 * time.Second)
	for {
		rows = snmptable(t, "udp:"+s.Addr, s.Community, "notifLogEntryTable")
		failed := 0
		for _, r := range alarmEntries(rows) {
			if strings.Contains(r["notifLogEntryOutcome"], "inform "+trapAddr+": failed") {
				failed++
			}
		}
		if failed == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("notifLogEntryTable within 30s: %v, want 3 entries whose inform to %s failed\n%s", rows, trapAddr, testutil.Tail(e.daemonLog.String(), 30))
		}
		time.Sleep(300 * time.Millisecond)
	}

	trapd := snmpdtest.StartTrapdWith(t, snmpdtest.TrapdOptions{Addr: trapAddr, MIBDirs: shippedDirs(t), Modules: []string{"SUBAGENT-MIB"}})
	if strings.Contains(trapd.Log(), "hotsetTrap") {
		t.Errorf("snmptrapd got a notification sent before it started:\n%s", trapd.Log())
	}
	base := "1.3.6.1.4.1.32473.1.0."
	rows = snmptable(t, "udp:"+s.Addr, s.Community, "notifLogEntryTable")
	alarms := alarmEntries(rows)
	if len(alarms) != 3 {
		t.Fatalf("log has %d hotset entries, want 3: %v", len(alarms), rows)
	}
	got := map[string]string{} // notification OID -> entry index
	for _, r := range alarms {
		idx := r["index"]
		got[r["notifLogEntryOid"]] = idx
		if r["notifLogEntryVars"] == "" || r["notifLogEntryVars"] == "0" {
			t.Errorf("entry %s keeps no VarBinds: %v", idx, r)
		}
	}
	vars := snmptable(t, "udp:"+s.Addr, s.Community, "notifLogEntryVarTable")
	for i, name := range []string{"pumpa", "pumpb", "pumpc"} {
		idx, ok := got[base+string(rune('1'+i))]
		if !ok {
			t.Errorf("no log entry with OID %s%d (hotset %s): %v", base, i+1, name, rows)
			continue
		}
		// The VarBinds of entry idx: rows "idx.n".
		byOID := map[string]string{}
		for k, r := range vars {
			if strings.HasPrefix(k, idx+".") {
				byOID[r["notifLogEntryVarOid"]] = r["notifLogEntryVarValue"]
			}
		}
		for suffix, want := range map[string]string{".14.0.1.0": name, ".14.0.5.0": "p2", ".14.0.6.0": "95"} {
			if v, ok := byOID["1.3.6.1.4.1.32473.1"+suffix]; !ok || v != want {
				t.Errorf("entry %s (%s): VarBind ...%s = %q, want %q; its VarBinds: %v", idx, name, suffix, v, want, byOID)
			}
		}
	}
}
