package main

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/arm"
)

// sloDefTable (base.110.5).
const sloDefEntry = writableOID + ".5.1"

// sloSet is an objective row with createAndGo: shop's checkout*
// transactions, 300 ms, 99.9 % (99900 parts per 100,000), a day.
func sloSet(name, target, window, storage string) []string {
	return []string{
		defCol(sloDefEntry, 2, name), "s", "shop",
		defCol(sloDefEntry, 3, name), "s", "checkout*",
		defCol(sloDefEntry, 4, name), "i", "300",
		defCol(sloDefEntry, 5, name), "i", target,
		defCol(sloDefEntry, 6, name), "i", window,
		defCol(sloDefEntry, 7, name), "i", storage,
		defCol(sloDefEntry, 8, name), "i", "4",
	}
}

const sloSetYAML = `slo:
  max_snmp_objectives: 2
objectives:
  - name: conf
    application: shop
    transaction: "*"
    target: 0.99
    window: 1h
`

// waitSLO waits for path to be served as want (or, want "", to be
// served no more).
func waitSLO(t *testing.T, e *env, path, want string) {
	t.Helper()
	got, ok := "", false
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		got, ok = rtlGet(e, path)
		if (want == "" && !ok) || (want != "" && ok && got == want) {
			return
		}
	}
	t.Errorf("%s: %q (served %v), want %q", path, got, ok, want)
}

// A manager creates objectives with snmpset through snmpd as an SNMPv3
// authPriv user: SLO/<name> serves its settings at once and counts the
// ARM transactions of this process, across a SIGHUP. Invalid rows (a
// target or window out of range, a window not whole minutes, a bad
// pattern, the configuration's name, one beyond slo.max_snmp_objectives)
// are refused with the right error and change nothing; the nonVolatile
// row comes back after a restart, the volatile one does not; destroy
// takes the objective away.
func TestSNMPSetObjectiveRows(t *testing.T) {
	s := writableSnmpd(t, "")
	e := newEnv(t)
	file := startConfigured(t, e, s, sloSetYAML)

	if out, err := snmpset(s, v3Opts, sloSet("checkout", "99900", "86400", "3")...); err != nil {
		t.Fatalf("createAndGo of an objective as %s: %v\n%s", setUser, err, out)
	}
	waitSLO(t, e, "SLO/checkout/window", "86400")
	for path, want := range map[string]string{"SLO/checkout/target": "99.9", "SLO/checkout/threshold": "300", "SLO/checkout/application": "shop"} {
		if got, ok := rtlGet(e, path); !ok || !strings.HasPrefix(got, want) {
			t.Errorf("%s: %q, want %s", path, got, want)
		}
	}
	// Measured from its creation: 5 good and 2 failed checkouts.
	tr := armAgent(t, e).App("shop", "").Transaction("checkout", "")
	for i := range 7 {
		h := tr.Start()
		h.Stop(map[bool]arm.Status{true: arm.Good, false: arm.Failed}[i < 5])
	}
	waitSLO(t, e, "SLO/checkout/total", "7")
	if got, ok := rtlGet(e, "SLO/checkout/good"); !ok || got != "5" {
		t.Errorf("SLO/checkout/good: %q, want 5", got)
	}
	// SIGHUP with one more configured objective keeps the created one and
	// its counts.
	if err := os.WriteFile(file, []byte(sloSetYAML+"  - {name: reloaded, application: shop, transaction: x, target: 0.9, window: 2h}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := e.daemon.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitSLO(t, e, "SLO/reloaded/window", "7200")
	if got, ok := rtlGet(e, "SLO/checkout/total"); !ok || got != "7" {
		t.Errorf("SLO/checkout/total after SIGHUP: %q, want 7", got)
	}
	if st := rowStatus(t, s, defCol(sloDefEntry, 8, "conf")); st != "1" {
		t.Errorf("the configured objective's RowStatus %s, want active", st)
	}
	if vs, err := s.Get(defCol(sloDefEntry, 5, "conf"), defCol(sloDefEntry, 7, "conf")); err != nil || len(vs) != 2 || vs[0].Value != "99000" || vs[1].Value != "5" {
		t.Errorf("the configured objective's target and StorageType: %v %v, want 99000 and readOnly(5)", vs, err)
	}

	for what, set := range map[string][]string{
		"window not whole minutes": sloSet("badwin", "99900", "3630", "3"),
		"a configured name":        sloSet("conf", "99900", "86400", "3"),
		"a bad pattern":            append(sloSet("badpat", "99900", "86400", "3"), defCol(sloDefEntry, 3, "badpat"), "s", "checkout["),
	} {
		if out, err := snmpset(s, writerOpts, set...); err == nil || !strings.Contains(out, "inconsistentValue") {
			t.Errorf("%s: %v\n%s", what, err, out)
		}
	}
	if out, err := snmpset(s, writerOpts, sloSet("badtarget", "100000", "86400", "3")...); err == nil || !strings.Contains(out, "wrongValue") {
		t.Errorf("target 100000: %v\n%s", err, out)
	}
	for _, name := range []string{"badwin", "badpat", "badtarget"} {
		if st := rowStatus(t, s, defCol(sloDefEntry, 8, name)); st != "noSuchInstance" {
			t.Errorf("%s after a refused set: %s", name, st)
		}
	}
	if out, err := snmpset(s, writerOpts, defCol(sloDefEntry, 8, "conf"), "i", "6"); err == nil || !strings.Contains(out, "wrongValue") {
		t.Errorf("destroy of a configured row: %v\n%s", err, out)
	}
	// max_snmp_objectives 2: a volatile second, then resourceUnavailable.
	if out, err := snmpset(s, writerOpts, sloSet("volatile", "95000", "3600", "2")...); err != nil {
		t.Fatalf("second objective: %v\n%s", err, out)
	}
	if out, err := snmpset(s, writerOpts, sloSet("third", "95000", "3600", "3")...); err == nil || !strings.Contains(out, "resourceUnavailable") {
		t.Errorf("third objective beyond max_snmp_objectives 2: %v\n%s", err, out)
	}

	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	e.start("--config", file, "--agentx", s.AgentXAddress)
	waitServed(t, s, idleOID, 10*time.Second)
	for name, want := range map[string]string{"checkout": "1", "volatile": "noSuchInstance"} {
		if st := rowStatus(t, s, defCol(sloDefEntry, 8, name)); st != want {
			t.Errorf("%s after a restart: %s, want %s", name, st, want)
		}
	}
	if vs, err := s.Get(defCol(sloDefEntry, 3, "checkout"), defCol(sloDefEntry, 5, "checkout")); err != nil || len(vs) != 2 || vs[0].Value != "checkout*" || vs[1].Value != "99900" {
		t.Errorf("checkout after a restart: %v %v", vs, err)
	}
	waitSLO(t, e, "SLO/checkout/window", "86400")
	waitSLO(t, e, "SLO/checkout/total", "7") // the counts were saved and restored

	if out, err := snmpset(s, writerOpts, defCol(sloDefEntry, 8, "checkout"), "i", "6"); err != nil {
		t.Fatalf("destroy: %v\n%s", err, out)
	}
	waitSLO(t, e, "SLO/checkout/window", "")
}
