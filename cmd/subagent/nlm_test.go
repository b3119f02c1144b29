package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/mib/mibtest"
)

// The RFC 3014 objects, numeric: the tests run without the IETF module.
const (
	nlmLimit    = "1.3.6.1.2.1.92.1.1.1.0"      // nlmConfigGlobalEntryLimit
	nlmLogged   = "1.3.6.1.2.1.92.1.2.1.0"      // nlmStatsGlobalNotificationsLogged
	nlmEntry    = "1.3.6.1.2.1.92.1.3.1.1."     // nlmLogEntry
	nlmVarEntry = "1.3.6.1.2.1.92.1.3.2.1."     // nlmLogVariableEntry
	outcomeText = base + ".111.1.1.7.0."        // notifLogOutcomeText."".<index>
	hotsetTrap1 = "1.3.6.1.4.1.32473.1.0.1"     // hotsetTrap1
	treeChanged = "1.3.6.1.4.1.32473.1.0.32769" // treeChanged
)

// A hotset's notification and the tree changed one of its supplier are
// listed, with their OIDs and typed VarBinds, by snmpwalk of nlmLogTable
// and nlmLogVariableTable on the standalone responder and through snmpd,
// which lets the daemon's registrations win over its own, empty, log:
// nlmConfigGlobalEntryLimit is the daemon's 500, not snmpd's 1000. With
// the IETF module installed, snmptable reads nlmLogTable by name too.
func TestNotificationLogMIBStandaloneAndSnmpd(t *testing.T) {
	s := snmpdtest.Start(t, snmpdtest.Options{})
	addr := fmt.Sprintf("127.0.0.1:%d", snmpdtest.FreeUDPPort(t))
	// snmpd alone serves its own log at mib-2 92, empty.
	before, err := s.Walk("1.3.6.1.2.1.92")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range before {
		if strings.HasPrefix(v.OID, nlmEntry) {
			t.Fatalf("snmpd alone serves nlmLogTable rows: %v", before)
		}
	}
	e := newEnv(t)
	file := filepath.Join(t.TempDir(), "subagent.yaml")
	conf := pumpAlarmYAML(snmpdtest.FreeUDPAddr(t), "", "")
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	e.start("--config", file, "--agentx", s.AgentXAddress, "--listen", addr)
	waitServed(t, s, idleOID, 10*time.Second)
	sup, loads, _ := pumpSupplier(t, e)
	setLoads(sup, loads, 10, 10, 10)
	waitValue(t, e, "Hotset/pumpalarm/groups", "1", 15*time.Second)
	setLoads(sup, loads, 93, 10, 10)
	waitValue(t, e, "Hotset/pumpalarm/events", "1", 15*time.Second)

	for _, c := range []struct {
		name string
		c    *snmpdtest.Snmpd
	}{{"standalone", snmpdtest.Target(t, addr, "public")}, {"snmpd", s}} {
		vars, err := c.c.Walk("1.3.6.1.2.1.92")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := map[string]snmpdtest.Var{}
		for _, v := range vars {
			got[v.OID] = v
		}
		if v := got[nlmLimit]; v.Type != "Gauge32" || v.Value != "500" {
			t.Errorf("%s: nlmConfigGlobalEntryLimit %v, want Gauge32 500 (the daemon's log_entries)", c.name, v)
		}
		if v := got[nlmLogged]; v.Type != "Counter32" || v.Value == "0" {
			t.Errorf("%s: nlmStatsGlobalNotificationsLogged %v, want a Counter32 above 0", c.name, v)
		}
		// The rows by notification: nlmLogNotificationID.0.<index>.
		idx := map[string]string{}
		for _, v := range vars {
			if rest, ok := strings.CutPrefix(v.OID, nlmEntry+"9.0."); ok {
				if v.Type != "OID" {
					t.Errorf("%s: nlmLogNotificationID %v is no OBJECT IDENTIFIER", c.name, v)
				}
				idx[v.Value] = rest
			}
		}
		trap, tree := idx[hotsetTrap1], idx[treeChanged]
		if trap == "" || tree == "" {
			t.Fatalf("%s: nlmLogTable lacks hotsetTrap1 or treeChanged: %v\n%s", c.name, idx, dump(vars))
		}
		if v := got[nlmEntry+"2.0."+trap]; v.Type != "Timeticks" {
			t.Errorf("%s: nlmLogTime %v is no TimeStamp", c.name, v)
		}
		if v := got[nlmEntry+"3.0."+trap]; v.Type != "Hex-STRING" && v.Type != "STRING" {
			t.Errorf("%s: nlmLogDateAndTime %v", c.name, v)
		}
		// The hotset's VarBinds: hotsetName (1, OctetString: type 6,
		// column 8) and hotsetThreshold (3, Integer32: type 4, column 7).
		want := []struct{ oid, typ, val string }{
			{nlmVarEntry + "2.0." + trap + ".1", "OID", base + ".14.0.1.0"},
			{nlmVarEntry + "3.0." + trap + ".1", "INTEGER", "6"},
			{nlmVarEntry + "8.0." + trap + ".1", "STRING", "pumpalarm"},
			{nlmVarEntry + "2.0." + trap + ".3", "OID", base + ".14.0.3.0"},
			{nlmVarEntry + "3.0." + trap + ".3", "INTEGER", "4"},
			{nlmVarEntry + "7.0." + trap + ".3", "INTEGER", "80"},
			// treeChanged's treeGeneration: Unsigned32 (type 2, column 5).
			{nlmVarEntry + "2.0." + tree + ".1", "OID", base + ".14.0.10.0"},
			{nlmVarEntry + "3.0." + tree + ".1", "INTEGER", "2"},
		}
		for _, w := range want {
			if v := got[w.oid]; v.Type != w.typ || v.Value != w.val {
				t.Errorf("%s: %s = %v, want %s: %s", c.name, w.oid, v, w.typ, w.val)
			}
		}
		if v := got[nlmVarEntry+"5.0."+tree+".1"]; v.Type != "Gauge32" {
			t.Errorf("%s: nlmLogVariableUnsigned32Val of treeGeneration %v, want a Gauge32", c.name, v)
		}
		out, err := c.c.Get(outcomeText + trap)
		if err != nil || len(out) != 1 || !strings.Contains(out[0].Value, "v2c trap ") {
			t.Errorf("%s: notifLogOutcomeText of hotsetTrap1: %v %v", c.name, out, err)
		}
		tableByName(t, c.name, c.c)
	}
}

// tableByName runs snmptable of NOTIFICATION-LOG-MIB::nlmLogTable and
// nlmLogVariableTable with SUBAGENT-MIB: the notification by name, its
// VarBinds with their values. Without the IETF module installed it says
// so and uses the project's stand-in of it (names, OIDs and syntaxes).
func tableByName(t *testing.T, name string, c *snmpdtest.Snmpd) {
	dirs, real := mibtest.NotificationLogDirs(t)
	if real {
		t.Logf("%s: snmptable by name with the installed NOTIFICATION-LOG-MIB", name)
	} else {
		t.Logf("%s: NOTIFICATION-LOG-MIB is not installed: the walks above used numeric OIDs; snmptable by name "+
			"uses the stand-in mib/mibtest/standins/NOTIFICATION-LOG-MIB", name)
	}
	shipped, err := filepath.Abs("../../MIBs")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ table, want string }{
		{"nlmLogTable", "SUBAGENT-MIB::hotsetTrap1"},
		{"nlmLogVariableTable", `SUBAGENT-MIB::hotsetName.0|octetString|?|?|?|?|"pumpalarm"|`},
	} {
		out, stderr, err := mibtest.Run(t, mibtest.NetSNMPEnv(t), "snmptable", "-v2c", "-c", c.Community, "-t", "2", "-r", "1",
			"-M", strings.Join(append(dirs, shipped), ":"), "-m", "NOTIFICATION-LOG-MIB:SUBAGENT-MIB", "-Ci", "-Cf", "|",
			"udp:"+c.Addr, "NOTIFICATION-LOG-MIB::"+tc.table)
		if err != nil || strings.TrimSpace(stderr) != "" || !strings.Contains(out, tc.want) {
			t.Errorf("%s: snmptable NOTIFICATION-LOG-MIB::%s has no %q: %v\n%s%s", name, tc.table, tc.want, err, stderr, out)
		}
	}
}

func dump(vars []snmpdtest.Var) string {
	var b strings.Builder
	for _, v := range vars {
		b.WriteString(v.String() + "\n")
	}
	return b.String()
}
