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

	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/mib/mibtest"
)

// armPrograms compiles libarm (the Makefile's flags) and the SDK sample
// (against libarm.so) and the load program (against libarm.a).
func armPrograms(t *testing.T) (sample, load string) {
	t.Helper()
	dir := t.TempDir()
	srcs, _ := filepath.Glob("../../libarm/src/*.c")
	args := append([]string{"-std=c11", "-O2", "-fPIC", "-pthread", "-Wall", "-Wextra", "-Werror", "-shared", "-o", filepath.Join(dir, "libarm.so")}, srcs...)
	build := func(args ...string) {
		if out, err := exec.Command("cc", args...).CombinedOutput(); err != nil {
			t.Fatalf("cc %v: %v\n%s", args, err, out)
		}
	}
	build(args...)
	build(append([]string{"-std=c11", "-O2", "-pthread", "-I../../libarm", "-o", filepath.Join(dir, "load"), "../../libarm/samples/load.c"}, srcs...)...)
	build("-O2", "-w", "-I../../libarm", "-o", filepath.Join(dir, "sample"), "../../libarm/samples/sample.c",
		"-L"+dir, "-Wl,-rpath,"+dir, "-larm")
	return filepath.Join(dir, "sample"), filepath.Join(dir, "load")
}

// armGet reads statistics with `subagent get`: path -> value text.
func armGet(t *testing.T, e *env, paths ...string) map[string]string {
	t.Helper()
	out, stderr, code := e.run(append(append([]string{"get"}, paths...), e.args()...)...)
	if code != 0 {
		return nil
	}
	_ = stderr
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 2 {
			m[f[0]] = f[1]
		}
	}
	return m
}

// armWait polls `subagent get` until path reads want.
func armWait(t *testing.T, e *env, path, want string) {
	t.Helper()
	var got map[string]string
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if got = armGet(t, e, path); got[path] == want {
			return
		}
	}
	t.Fatalf("%s = %q, want %q\n%s", path, got[path], want, e.daemonLog)
}

// armOID finds a statistic's full OID in `subagent peek --oid`.
func armOID(t *testing.T, e *env, path string) string {
	t.Helper()
	out, _, _ := e.run(append([]string{"peek", "--oid", "RTime/"}, e.args()...)...)
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, path) {
			for _, f := range strings.Fields(line) {
				if strings.HasPrefix(f, base+".13.1.") {
					return f
				}
			}
		}
	}
	t.Fatalf("no OID for %s in peek:\n%s", path, out)
	return ""
}

func TestARMLoadAndSampleThroughGetAndSnmpd(t *testing.T) {
	mibtest.Require(t, "snmptranslate", "smilint")
	sample, load := armPrograms(t)
	s := snmpdtest.Start(t, snmpdtest.Options{})
	e := newEnv(t)
	t.Setenv("SUBAGENT_ARM_RING_SLOTS", "32768") // holds the whole run: count is exact
	e.start("--agentx", s.AgentXAddress)
	waitServed(t, s, idleOID, 10*time.Second)

	const threads, each = 4, 2500
	c := exec.Command(load, strconv.Itoa(threads), strconv.Itoa(each))
	c.Env = append(os.Environ(), "SUBAGENT_RUN_DIR="+e.runDir)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("load: %v\n%s", err, out)
	}
	p := "RTime/ARM/LoadTest/LoadTransaction/"
	armWait(t, e, p+"count", strconv.Itoa(threads*each))
	names := []string{"count", "aborted", "failed", "respmin", "respavg", "respmax", "lost"}
	var paths []string
	for _, n := range names {
		paths = append(paths, p+n)
	}
	got := armGet(t, e, paths...)
	if got[p+"aborted"] != strconv.Itoa(threads) || got[p+"failed"] != strconv.Itoa(2*threads) || got[p+"lost"] != "0" {
		t.Errorf("aborted %s failed %s lost %s, want %d, %d, 0", got[p+"aborted"], got[p+"failed"], got[p+"lost"], threads, 2*threads)
	}
	mn, _ := strconv.ParseFloat(got[p+"respmin"], 64)
	avg, _ := strconv.ParseFloat(got[p+"respavg"], 64)
	mx, _ := strconv.ParseFloat(got[p+"respmax"], 64)
	if !(mn <= avg && avg <= mx+1) {
		t.Errorf("respmin %v respavg %v respmax %v out of order", mn, avg, mx)
	}
	// The same values through snmpd (respavg has 3 decimals on the wire).
	for _, n := range []string{"count", "aborted", "failed", "respmin", "respmax"} {
		v, err := s.Get(armOID(t, e, p+n))
		if err != nil || len(v) != 1 || v[0].Value != got[p+n] {
			t.Errorf("snmpget %s = %v %v, subagent get says %s", n, v, err, got[p+n])
		}
	}
	if v, err := s.Get(armOID(t, e, p+"respavg")); err != nil || len(v) != 1 || v[0].Value != strconv.Itoa(int(avg*1000+0.5)) {
		t.Errorf("snmpget respavg = %v %v, subagent get says %s", v, err, got[p+"respavg"])
	}

	// The Go equivalent, through package arm.
	gobin := filepath.Join(t.TempDir(), "armload")
	if out, err := exec.Command("go", "build", "-o", gobin, "../../arm/cmd/armload").CombinedOutput(); err != nil {
		t.Fatalf("go build armload: %v\n%s", err, out)
	}
	gc := exec.Command(gobin, strconv.Itoa(threads), strconv.Itoa(each))
	gc.Env = append(os.Environ(), "SUBAGENT_RUN_DIR="+e.runDir)
	if out, err := gc.CombinedOutput(); err != nil || !strings.Contains(string(out), "connected true") {
		t.Fatalf("armload: %v\n%s", err, out)
	}
	gp := "RTime/ARM/GoLoadTest/LoadTransaction/"
	armWait(t, e, gp+"count", strconv.Itoa(threads*each))
	gv := armGet(t, e, gp+"aborted", gp+"failed", gp+"metric1", gp+"string")
	if gv[gp+"aborted"] != strconv.Itoa(threads) || gv[gp+"failed"] != strconv.Itoa(2*threads) ||
		gv[gp+"metric1"] != strconv.Itoa(2*threads*each) || gv[gp+"string"] != "part-42" {
		t.Errorf("Go load: %v", gv)
	}
	if v, err := s.Get(armOID(t, e, gp+"count")); err != nil || len(v) != 1 || v[0].Value != strconv.Itoa(threads*each) {
		t.Errorf("snmpget Go count = %v %v", v, err)
	}

	// The generated MIB declares both applications' transactions (ARM
	// applications keep their names and numbers), passes smilint, and
	// its names are the OIDs the daemon serves.
	module, text, _, stderr, code := runMIB(t, e, "SUBAGENT-MIB")
	if code != 0 {
		t.Fatalf("subagent mib: %s", stderr)
	}
	dirs := append(mibtest.BaseDirs(t), filepath.Dir(module))
	mibtest.LintClean(t, module, dirs)
	named := map[string]string{
		"rTimeARMLoadTestLoadTransactionCount":     p + "count",
		"rTimeARMGoLoadTestLoadTransactionMetric1": gp + "metric1",
		"rTimeARMGoLoadTestLoadTransactionRespavg": gp + "respavg",
	}
	var mibNames, mibPaths []string
	for name, path := range named {
		if !strings.Contains(text, name+" OBJECT-TYPE") {
			t.Errorf("the module does not declare %s", name)
		}
		mibNames, mibPaths = append(mibNames, "SUBAGENT-MIB::"+name+".0"), append(mibPaths, path)
	}
	for i, oid := range mibtest.Translate(t, mibtest.NetSNMPEnv(t), dirs, "SUBAGENT-MIB", []string{"-On"}, mibNames) {
		if want := armOID(t, e, mibPaths[i]); strings.TrimPrefix(oid, ".") != want {
			t.Errorf("%s translates to %s; the daemon serves %s there", mibNames[i], oid, want)
		}
	}

	// The SDK's sample, unchanged: one transaction a second.
	sc := exec.Command(sample)
	sc.Env = append(os.Environ(), "SUBAGENT_RUN_DIR="+e.runDir)
	if err := sc.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sc.Process.Kill(); sc.Wait() }()
	sp := "RTime/ARM/ARMsampleprogram/Sample_transaction/"
	armWait(t, e, sp+"count", "1")
	oid := armOID(t, e, sp+"count")

	// The daemon restarts under the running sample: the library comes
	// back by itself, and the OIDs are the same (numbers persisted).
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	e.start("--agentx", s.AgentXAddress)
	armWait(t, e, sp+"count", "2")
	if again := armOID(t, e, sp+"count"); again != oid {
		t.Errorf("after the restart %s is %s, was %s", sp+"count", again, oid)
	}
	// The instance open across the restart may have been lost (counted);
	// killed inside its transaction, the sample loses exactly one more.
	before, _ := strconv.Atoi(armGet(t, e, sp+"lost")[sp+"lost"])
	if before > 1 {
		t.Errorf("lost %d across one restart, at most the one in flight", before)
	}
	sc.Process.Signal(syscall.SIGKILL)
	sc.Wait()
	armWait(t, e, sp+"lost", strconv.Itoa(before+1))
}
