package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/internal/ctest"
	"github.com/perfagent/subagent/internal/snmpdtest"
)

// The guide's first sample's statistics, their OIDs below base, and the
// values SpmiSupl1.c starts from (they only grow).
var supl1 = []struct {
	path, oid string
	min       uint64
}{
	{"DDS/IBM/Test/gadgets", ".99.2.220.1.0", 22},
	{"DDS/IBM/Test/widgets", ".99.2.220.2.0", 42},
	{"DDS/IBM/Moretest/SubTest/level", ".99.2.221.222.1.0", 28},
	{"DDS/IBM/Moretest/SubTest/queue", ".99.2.221.222.2.0", 62},
}

// startC runs a C supplier against the daemon of e, finding its socket
// through SUBAGENT_RUN_DIR as a supplier in production would.
func startC(t *testing.T, e *env, bin string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "SUBAGENT_DDS_SOCKET=", "SUBAGENT_RUN_DIR="+e.runDir)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// waitGone polls snmpd until oid is no longer served.
func waitGone(t *testing.T, s *snmpdtest.Snmpd, oid string, within time.Duration) {
	t.Helper()
	waitFor(t, s, oid, false, within)
}

// getValues runs `subagent get` against the daemon and returns the value
// column by path.
func getValues(t *testing.T, e *env, paths ...string) map[string]string {
	t.Helper()
	out, stderr, code := e.run(append(append([]string{"get"}, paths...), e.args()...)...)
	if code != 0 {
		t.Fatalf("get %v: %s", paths, stderr)
	}
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) >= 2 {
			m[f[0]] = f[1]
		}
	}
	return m
}

// getFloats is getValues as numbers; a path whose value is no number is
// an error of the test and left out.
func getFloats(t *testing.T, e *env, paths ...string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	vals := getValues(t, e, paths...)
	for _, p := range paths {
		v := vals[p]
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Errorf("subagent get %s: %q", p, v)
			continue
		}
		out[p] = f
	}
	return out
}

func atLeast(t *testing.T, what, got string, min uint64) {
	t.Helper()
	if v, err := strconv.ParseUint(got, 10, 64); err != nil || v < min {
		t.Errorf("%s = %q, want an integer of at least %d", what, got, min)
	}
}

// The guide's C samples, built with the system compiler against libSpmi,
// run against the real daemon under a real snmpd: their values read back
// through `subagent get`, snmpget and snmpwalk; a SIGKILLed sample's
// contexts vanish and a restarted one comes back under the same OIDs; a
// volatile context added and deleted while running shows up and goes.
func TestCSamplesThroughGetAndSnmpd(t *testing.T) {
	lib := ctest.Build(t, "")
	s := snmpdtest.Start(t, snmpdtest.Options{})
	e := newEnv(t)
	e.start("--agentx", s.AgentXAddress)
	waitServed(t, s, idleOID, 10*time.Second)

	supl := lib.Sample(t, "SpmiSupl1", false, t.TempDir())
	sup := startC(t, e, supl)
	waitServed(t, s, base+supl1[3].oid, 10*time.Second)

	var paths, oids []string
	for _, st := range supl1 {
		paths, oids = append(paths, st.path), append(oids, base+st.oid)
	}
	got := getValues(t, e, paths...)
	vars, err := s.Get(oids...)
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range supl1 {
		atLeast(t, "subagent get "+st.path, got[st.path], st.min)
		atLeast(t, "snmpget "+vars[i].OID, vars[i].Value, st.min)
	}
	walk := func() []string {
		t.Helper()
		vars, err := s.Walk(base + ".99.2")
		if err != nil {
			t.Fatal(err)
		}
		return oidsOf(t, vars)
	}
	before := walk()
	if len(before) != len(supl1) {
		t.Fatalf("snmpwalk of DDS/IBM: %v, want the sample's %d statistics", before, len(supl1))
	}

	// SIGKILL: the daemon sees the socket close and drops the contexts.
	sup.Process.Signal(syscall.SIGKILL)
	sup.Wait()
	waitGone(t, s, base+supl1[0].oid, 5*time.Second)
	// Restarted on its stale file: registered again, same OIDs.
	sup = startC(t, e, supl)
	waitServed(t, s, base+supl1[3].oid, 10*time.Second)
	if after := walk(); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Fatalf("OIDs after restart %v, before %v", after, before)
	}
	sup.Process.Signal(syscall.SIGTERM) // its handler calls SpmiExit
	sup.Wait()
	waitGone(t, s, base+supl1[0].oid, 5*time.Second)

	// A volatile context added and deleted while the supplier runs.
	vol := startC(t, e, lib.Sample(t, "SpmiVolatile", true, ""), filepath.Join(t.TempDir(), "hook"))
	waitServed(t, s, base+".99.2.220.1.0", 10*time.Second)
	bingo := base + ".99.2.221.1.2.0" // DDS/IBM/Moretest/Bingo/solutions
	vol.Process.Signal(syscall.SIGUSR1)
	waitServed(t, s, bingo, 10*time.Second)
	if v, err := s.Get(bingo); err != nil || v[0].Value != "6" {
		t.Fatalf("snmpget Bingo/solutions: %v %v, want 6", v, err)
	}
	if v := getValues(t, e, "DDS/IBM/Moretest/Bingo/solutions"); v["DDS/IBM/Moretest/Bingo/solutions"] != "6" {
		t.Fatalf("subagent get Bingo/solutions: %v, want 6", v)
	}
	vol.Process.Signal(syscall.SIGUSR2)
	waitGone(t, s, bingo, 5*time.Second)
	if v, err := s.Get(base + ".99.2.220.2.0"); err != nil || v[0].Value != "42" {
		t.Fatalf("widgets after the delete: %v %v, want 42", v, err)
	}
	vol.Process.Signal(syscall.SIGTERM)
	vol.Wait()
	waitGone(t, s, base+".99.2.220.1.0", 5*time.Second)
}
