package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/mib/mibtest"
)

// ownTrapYAML is alarmYAML's alarm with trap number 27 of its own.
func ownTrapYAML(trapd string) string {
	return strings.Replace(alarmYAML(trapd), "    cleared: true\n", "    cleared: true\n    trap_no: 27\n", 1)
}

// An alarm with trap number 27 raises alarmTrap27 (base.0.27), which the
// module `subagent mib` writes from the running daemon declares, naming
// the alarm: snmptrapd, loading it, prints the name and alarmRaised's
// objects; the clear is alarmCleared, and no alarmRaised is sent.
func TestAlarmOwnTrapNumberReachesSnmptrapd(t *testing.T) {
	mibtest.Require(t, "snmptable", "snmptranslate", "smilint")
	s := snmpdtest.Start(t, snmpdtest.Options{})
	trapAddr := snmpdtest.FreeUDPAddr(t)
	e := newEnv(t)
	startConfigured(t, e, s, ownTrapYAML(trapAddr))
	sup, loads, _ := pumpSupplier(t, e)
	setLoads(sup, loads, 10, 10, 10)
	watchStates(t, s, "inactive", 20*time.Second)

	module, text, _, stderr, code := runMIB(t, e, "SUBAGENT-MIB")
	if code != 0 || !strings.Contains(text, "alarmTrap27 NOTIFICATION-TYPE") || !strings.Contains(strings.Join(strings.Fields(text), " "), "Sent by: pumphot (DDS/Acme/Pumps/p1/load > 80).") {
		t.Fatalf("subagent mib (%s) declares no alarmTrap27 sent by pumphot:\n%s", stderr, grepLines(text, "alarmTrap"))
	}
	// subagent expr: the control socket applies the same rules.
	expr := func(args ...string) (string, string, int) {
		return e.run(append(append([]string{"expr"}, args...), e.args()...)...)
	}
	if _, stderr, code := expr("create", "alarm", "other", "1", "--trap-no", "27"); code == 0 || !strings.Contains(stderr, `alarm "pumphot" (alarms[0])`) {
		t.Errorf("subagent expr create --trap-no 27 (pumphot's): exit %d, %s", code, stderr)
	}
	if _, stderr, code := expr("create", "alarm", "other", "1", "--trap-no", "28"); code != 0 {
		t.Fatalf("subagent expr create --trap-no 28: exit %d, %s", code, stderr)
	}
	if out, _, _ := expr("list"); !strings.Contains(out, " trap_no=28\n") || !strings.Contains(out, " trap_no=27\n") {
		t.Errorf("subagent expr list does not show both trap numbers:\n%s", out)
	}
	if _, stderr, code := expr("delete", "alarm", "other"); code != 0 {
		t.Fatalf("subagent expr delete: exit %d, %s", code, stderr)
	}
	dirs := append(mibtest.BaseDirs(t), filepath.Dir(module))
	mibtest.LintClean(t, module, dirs)
	trapd := snmpdtest.StartTrapdWith(t, snmpdtest.TrapdOptions{Addr: trapAddr, MIBDirs: dirs, Modules: []string{"SUBAGENT-MIB"}})

	const own, raised, cleared = "OID: SUBAGENT-MIB::alarmTrap27\t", "OID: SUBAGENT-MIB::alarmRaised\t", "OID: SUBAGENT-MIB::alarmCleared\t"
	setLoads(sup, loads, 90, 10, 10)
	waitCount(t, trapd, own, 1, 20*time.Second)
	setLoads(sup, loads, 10, 10, 10)
	waitCount(t, trapd, cleared, 1, 20*time.Second)
	log := trapd.Log()
	if strings.Count(log, own) != 1 || strings.Count(log, raised) != 0 || strings.Index(log, own) > strings.Index(log, cleared) {
		t.Fatalf("snmptrapd got %d alarmTrap27, %d alarmRaised, %d alarmCleared; want alarmTrap27 then alarmCleared:\n%s",
			strings.Count(log, own), strings.Count(log, raised), strings.Count(log, cleared), log)
	}
	vbs := trapd.VarBinds(own)
	if len(vbs) != 1 {
		t.Fatalf("alarmTrap27's VarBinds: %q", vbs)
	}
	got := strings.Join(vbs[0], "\t")
	for _, want := range []string{"alarmName.0 = STRING: pumphot", "alarmInstance.0 = STRING:", "alarmValue.0 = STRING: 1",
		"alarmSeverity.0 = INTEGER: 2", `alarmCondition.0 = STRING: DDS/Acme/Pumps/p1/load > 80`} {
		if !strings.Contains(got, want) {
			t.Errorf("alarmTrap27 lacks %q: %q", want, got)
		}
	}
	if strings.Index(got, "alarmName.0") > strings.Index(got, "alarmCondition.0") {
		t.Errorf("alarmTrap27's objects are not in alarmRaised's order: %q", got)
	}
}

// A SET through snmpd of a trap number an alarm sends is refused with
// inconsistentValue and creates nothing: an alarmDefTable row with the
// configured alarm's number, and a hotsetDefTable row with it; a free
// number is taken.
func TestSNMPSetCollidingTrapNumberRefused(t *testing.T) {
	trapd := snmpdtest.StartTrapd(t)
	s := writableSnmpd(t, trapd.Addr)
	e := newEnv(t)
	startConfigured(t, e, s, `expressions:
  interval: 1s
alarms:
  - {name: cfgalarm, expr: DDS/Acme/Pumps/p1/load > 80, trap_no: 41}
`)
	sup, loads, _ := pumpSupplier(t, e)
	setLoads(sup, loads, 10, 10, 10)
	waitValue(t, e, "DDS/Acme/Pumps/p1/load", "10", 15*time.Second) // the hotset row's statistic is served

	withTrap := func(set []string, n string) []string {
		return append(set, defCol(alarmDefEntry, 12, "pumpown"), "i", n)
	}
	for what, set := range map[string][]string{
		"alarm row with the configured alarm's number":  withTrap(alarmSet("pumpown", "80", "2"), "41"),
		"hotset row with the configured alarm's number": hotRow("hot41", "2"), // trap number 41
	} {
		out, err := snmpset(s, v3Opts, set...)
		if err == nil || !strings.Contains(out, "inconsistentValue") {
			t.Errorf("%s: %v, want inconsistentValue\n%s", what, err, out)
		}
	}
	for _, oid := range []string{defCol(alarmDefEntry, 11, "pumpown"), hotCol(11, "hot41")} {
		if st := rowStatus(t, s, oid); st != "noSuchInstance" {
			t.Errorf("%s after a refused SET: %s, want noSuchInstance", oid, st)
		}
	}
	if out, err := snmpset(s, v3Opts, withTrap(alarmSet("pumpown", "80", "2"), "42")...); err != nil {
		t.Fatalf("alarm row with a free trap number: %v\n%s", err, out)
	}
	if st := rowStatus(t, s, defCol(alarmDefEntry, 12, "pumpown")); st != "42" {
		t.Errorf("alarmDefTrapNo.pumpown: %s, want 42", st)
	}
}
