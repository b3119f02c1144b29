package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/mib/mibtest"
)

// sample builds the Go sample supplier (samples/spmisupl).
func sample(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "spmisupl")
	if out, err := exec.Command("go", "build", "-o", bin, "../../samples/spmisupl").CombinedOutput(); err != nil {
		t.Fatalf("go build spmisupl: %v\n%s", err, out)
	}
	return bin
}

// startSample runs the sample with the daemon found through
// SUBAGENT_RUN_DIR, as a supplier on the same machine would.
func startSample(t *testing.T, e *env, bin, file string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-file", file}, args...)...)
	cmd.Env = append(os.Environ(), "SUBAGENT_RUN_DIR="+e.runDir)
	var log testutil.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		if t.Failed() {
			t.Logf("spmisupl output:\n%s", log.String())
		}
	})
	return cmd
}

// waitFor polls snmpget of oid until present() says so, for at most within.
func waitFor(t *testing.T, s *snmpdtest.Snmpd, oid string, present bool, within time.Duration) {
	t.Helper()
	testutil.Eventually(t, fmt.Sprintf("%s present=%v", oid, present), within, func() bool {
		v, err := s.Get(oid)
		return err == nil && len(v) == 1 && strings.HasPrefix(v[0].Type, "noSuch") != present
	})
}

func getUint(t *testing.T, s string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return n
}

// The Go sample supplier reproduces the guide's two samples; its values
// read back through `subagent get` and snmpd, its volatile context comes
// and goes, SIGKILL removes it, and a restart brings back the same OIDs
// with no clean-up. `subagent mib` then names its objects.
func TestGoSampleSupplierKilledAndRestarted(t *testing.T) {
	mibtest.Require(t, "smilint")
	s := snmpdtest.Start(t, snmpdtest.Options{})
	e := newEnv(t)
	e.start("--agentx", s.AgentXAddress)
	waitServed(t, s, idleOID, 10*time.Second)
	bin, file := sample(t), filepath.Join(t.TempDir(), "SpmiSupl.shm")
	gadgets, level := base+".99.2.220.1.0", base+".99.2.221.222.1.0"
	problems, solutions := base+".99.2.221.1.1.0", base+".99.2.221.1.2.0"

	sup := startSample(t, e, bin, file, "-volatile", "-period", "1h")
	waitFor(t, s, problems, true, 10*time.Second)

	out, stderr, code := e.run(append([]string{"get", "DDS/IBM/Test/gadgets", "DDS/IBM/Moretest/SubTest/level"}, e.args()...)...)
	if code != 0 {
		t.Fatalf("get: %s", stderr)
	}
	var got []uint64
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(l)
		got = append(got, getUint(t, f[1]))
	}
	vars, err := s.Get(gadgets, level, problems, solutions)
	if err != nil {
		t.Fatal(err)
	}
	// Both only grow from the sample's first values (22 and 28), so what
	// snmpd reads later is at least what get read.
	for i, first := range []uint64{22, 28} {
		if got[i] < first || getUint(t, vars[i].Value) < got[i] {
			t.Errorf("%s: get %d, then snmpget %s; want %d <= get <= snmpget", vars[i].OID, got[i], vars[i].Value, first)
		}
	}
	if vars[2].Value != "5" || vars[3].Value != "6" {
		t.Errorf("Bingo's problems and solutions through snmpd: %v, want 5 and 6", vars[2:])
	}
	out, _, _ = e.run(append([]string{"peek", "--oid", "DDS/IBM/Moretest/"}, e.args()...)...)
	if !strings.Contains(out, "DDS/IBM/Moretest/Bingo/problems") || !strings.Contains(out, "99.2.221.1.1") {
		t.Errorf("peek lacks the volatile context:\n%s", out)
	}

	// The generated MIB names the supplier's objects and passes smilint.
	module, text, _, stderr, code := runMIB(t, e, "SUBAGENT-MIB")
	if code != 0 {
		t.Fatalf("subagent mib: %s", stderr)
	}
	for _, want := range []string{"ddsIBMTestGadgets OBJECT-TYPE", "ddsIBMMoretestSubTestLevel OBJECT-TYPE"} {
		if !strings.Contains(text, want) {
			t.Errorf("the module lacks %q", want)
		}
	}
	mibtest.LintClean(t, module, append(mibtest.BaseDirs(t), filepath.Dir(module)))

	// SIGKILL: no Exit, no clean-up; the daemon sees the socket close.
	if err := sup.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	sup.Wait()
	waitFor(t, s, gadgets, false, 5*time.Second)
	waitFor(t, s, problems, false, time.Second)
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("the killed sample's file should still be there to prove restart copes: %v", err)
	}

	// Restarted over its stale file: the same OIDs, and the volatile
	// context deleted again while it runs.
	sup = startSample(t, e, bin, file, "-volatile", "-period", "200ms", "-del-after", "3s")
	waitFor(t, s, gadgets, true, 10*time.Second)
	waitFor(t, s, problems, true, 5*time.Second)
	waitFor(t, s, problems, false, 10*time.Second)
	if v, err := s.Get(level); err != nil || getUint(t, v[0].Value) < 28 {
		t.Fatalf("after restart %s = %v %v", level, v, err)
	}

	// SIGTERM: the sample exits as the guide's does, removing its file.
	sup.Process.Signal(syscall.SIGTERM)
	sup.Wait()
	waitFor(t, s, gadgets, false, 5*time.Second)
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("after SpmiExit the file is still there: %v", err)
	}
}
