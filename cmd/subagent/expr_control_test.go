package main

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

const exprControlYAML = `expressions:
  interval: 1s
  max_snmp_derived: 1
alarms:
  - {name: confalarm, expr: "DDS/Acme/Pumps/p2/load > 99"}
`

// subagent expr create, list and delete through the control socket: a
// derived statistic created there is served and is a nonVolatile row of
// derivedDefTable through snmpd; the configuration file's checks, the
// names across both kinds, max_snmp_derived and the configured alarm's
// protection refuse with the reason; delete takes it away everywhere.
func TestExprCreateListDeleteThroughControlSocket(t *testing.T) {
	s := writableSnmpd(t, "")
	e := newEnv(t)
	startConfigured(t, e, s, exprControlYAML)
	sup, loads, _ := pumpSupplier(t, e)
	setLoads(sup, loads, 10, 20, 30)
	expr := func(args ...string) (string, string, int) {
		return e.run(append(append([]string{"expr"}, args...), e.args()...)...)
	}
	if out, stderr, code := expr("create", "derived", "ctlsum", "sum(DDS/Acme/Pumps/*/load)", "--units", "percent"); code != 0 {
		t.Fatalf("create derived: %d %s %s", code, out, stderr)
	}
	waitValue(t, e, "Derived/ctlsum/value", "60", 15*time.Second)
	if st := rowStatus(t, s, defCol(derivedDefEntry, 8, "ctlsum")); st != "1" {
		t.Errorf("ctlsum's derivedDefTable RowStatus %s, want active", st)
	}
	if st := rowStatus(t, s, defCol(derivedDefEntry, 7, "ctlsum")); st != "3" {
		t.Errorf("ctlsum's StorageType %s, want nonVolatile", st)
	}
	if out, stderr, code := expr("create", "alarm", "ctlalarm", "DDS/Acme/Pumps/p1/load", "--rising", "80", "--falling", "70", "--for", "2", "--frequency", "10m"); code != 0 {
		t.Fatalf("create alarm: %d %s %s", code, out, stderr)
	}

	for what, c := range map[string]struct {
		args []string
		want string
	}{
		"beyond max_snmp_derived": {[]string{"create", "derived", "second", "1 + 1"}, "max_snmp_derived"},
		"a derived's name":        {[]string{"create", "alarm", "ctlsum", "1 > 0"}, "already the name of a derived statistic"},
		"a syntax error":          {[]string{"create", "alarm", "badsyntax", "sum(DDS/Acme/Pumps/*/load"}, `def.expr: "sum(DDS/Acme/Pumps/*/load" at 26`},
		"falling above rising":    {[]string{"create", "alarm", "badfall", "1", "--rising", "1", "--falling", "2"}, "falling"},
		"a flag of the other":     {[]string{"create", "alarm", "badflag", "1", "--units", "x"}, "--units is not a setting of a alarm"},
		"a configured alarm":      {[]string{"delete", "alarm", "confalarm"}, "configuration file"},
		"an unknown kind":         {[]string{"create", "metric", "m", "1"}, "want derived or alarm"},
		"frequency beyond a week": {[]string{"create", "alarm", "badfreq", "1", "--frequency", "200h"}, "frequency: 200h0m0s is not whole seconds from 0 to 168h0m0s"},
	} {
		if out, stderr, code := expr(c.args...); code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, want an error with %q: %s %s", what, code, c.want, out, stderr)
		}
	}

	out, stderr, code := expr("list")
	if code != 0 {
		t.Fatalf("list: %d %s", code, stderr)
	}
	for _, want := range []string{
		`derived\s+ctlsum\s+nonVolatile\s+sum\(DDS/Acme/Pumps/\*/load\)\s+units="percent"`,
		`alarm\s+confalarm\s+readOnly\s+DDS/Acme/Pumps/p2/load > 99\s+for=1`,
		`alarm\s+ctlalarm\s+nonVolatile\s+DDS/Acme/Pumps/p1/load\s+for=2 keep=1 severity=0 cleared=false frequency=10m0s rising=80 falling=70`,
	} {
		if !regexp.MustCompile(`(?m)^` + want).MatchString(out) {
			t.Errorf("list lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "badsyntax") || strings.Contains(out, "second") {
		t.Errorf("a refused definition is listed:\n%s", out)
	}

	if out, stderr, code := expr("delete", "derived", "ctlsum"); code != 0 {
		t.Fatalf("delete: %d %s %s", code, out, stderr)
	}
	// The tables' view is rebuilt within a second of a change outside SNMP.
	st := ""
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && st != "noSuchInstance"; time.Sleep(200 * time.Millisecond) {
		st = rowStatus(t, s, defCol(derivedDefEntry, 8, "ctlsum"))
	}
	if st != "noSuchInstance" {
		t.Errorf("ctlsum's row after delete: %s", st)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if _, ok := rtlGet(e, "Derived/ctlsum/value"); !ok {
			return
		}
	}
	t.Errorf("Derived/ctlsum still served after delete")
}
