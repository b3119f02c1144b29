package main

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// subagent slo create, list and delete through the control socket: an
// objective created there is served as SLO/<name> and is a nonVolatile
// row of sloDefTable through snmpd; the configuration file's checks,
// its names, max_snmp_objectives and the configured objective's
// protection refuse with the reason; delete takes it away everywhere.
func TestSLOCreateListDeleteThroughControlSocket(t *testing.T) {
	s := writableSnmpd(t, "")
	e := newEnv(t)
	startConfigured(t, e, s, strings.Replace(sloSetYAML, "max_snmp_objectives: 2", "max_snmp_objectives: 1", 1))
	sloRun := func(args ...string) (string, string, int) {
		return e.run(append(append([]string{"slo"}, args...), e.args()...)...)
	}
	if out, stderr, code := sloRun("create", "ctl", "--application", "shop", "--transaction", "pay*", "--threshold", "250ms", "--target", "0.9995", "--window", "168h"); code != 0 {
		t.Fatalf("create: %d %s %s", code, out, stderr)
	}
	waitSLO(t, e, "SLO/ctl/window", "604800")
	if vs, err := s.Get(defCol(sloDefEntry, 4, "ctl"), defCol(sloDefEntry, 5, "ctl"), defCol(sloDefEntry, 7, "ctl"), defCol(sloDefEntry, 8, "ctl")); err != nil || len(vs) != 4 ||
		vs[0].Value != "250" || vs[1].Value != "99950" || vs[2].Value != "3" || vs[3].Value != "1" {
		t.Errorf("ctl's sloDefTable row (threshold, target, StorageType, RowStatus): %v %v, want 250 99950 3 1", vs, err)
	}

	for what, c := range map[string]struct {
		args []string
		want string
	}{
		"beyond max_snmp_objectives": {[]string{"create", "second", "--application", "a", "--transaction", "t", "--target", "0.99"}, "max_snmp_objectives"},
		"a configured name":          {[]string{"create", "conf", "--application", "a", "--transaction", "t", "--target", "0.99"}, "the configuration file has an objective"},
		"a window not whole minutes": {[]string{"create", "ctl", "--application", "a", "--transaction", "t", "--target", "0.99", "--window", "1h30s"}, "objective.window: 1h0m30s is not whole minutes"},
		"a target above 0.99999":     {[]string{"create", "ctl", "--application", "a", "--transaction", "t", "--target", "1"}, "objective.target: 1 is not a ratio"},
		"a bad pattern":              {[]string{"create", "ctl", "--application", "a[", "--transaction", "t", "--target", "0.99"}, `objective.application: "a[" is not a pattern`},
		"deleting the configured":    {[]string{"delete", "conf"}, "configuration file"},
		"deleting an unknown":        {[]string{"delete", "nosuch"}, `no objective "nosuch"`},
	} {
		if out, stderr, code := sloRun(c.args...); code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, want an error with %q: %s %s", what, code, c.want, out, stderr)
		}
	}

	out, stderr, code := sloRun("list")
	if code != 0 {
		t.Fatalf("list: %d %s", code, stderr)
	}
	for _, want := range []string{
		`conf\s+readOnly\s+shop\s+\*\s+availability\s+0\.99\s+1h0m0s`,
		`ctl\s+nonVolatile\s+shop\s+pay\*\s+250ms\s+0\.9995\s+168h0m0s`,
	} {
		if !regexp.MustCompile(`(?m)^` + want + `$`).MatchString(out) {
			t.Errorf("list lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "second") {
		t.Errorf("a refused objective is listed:\n%s", out)
	}

	if out, stderr, code := sloRun("delete", "ctl"); code != 0 {
		t.Fatalf("delete: %d %s %s", code, out, stderr)
	}
	st := ""
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && st != "noSuchInstance"; time.Sleep(200 * time.Millisecond) {
		st = rowStatus(t, s, defCol(sloDefEntry, 8, "ctl"))
	}
	if st != "noSuchInstance" {
		t.Errorf("ctl's row after delete: %s", st)
	}
	waitSLO(t, e, "SLO/ctl/window", "")
}
