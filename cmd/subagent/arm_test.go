package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/arm"
	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/mib/mibtest"
)

// libarmSources are libarm's C sources as the Makefile compiles them:
// its own and the run directory's it shares with libSpmi (cshared).
func libarmSources() []string {
	srcs, _ := filepath.Glob("../../libarm/src/*.c")
	return append(srcs, "../../cshared/rundir.c")
}

// armPrograms compiles libarm (the Makefile's flags) and the SDK sample
// (against libarm.so) and the load program (against libarm.a).
func armPrograms(t *testing.T) (sample, load string) {
	t.Helper()
	dir := t.TempDir()
	srcs := libarmSources()
	args := append([]string{"-std=c11", "-O2", "-fPIC", "-pthread", "-Wall", "-Wextra", "-Werror", "-I../../cshared", "-shared", "-o", filepath.Join(dir, "libarm.so")}, srcs...)
	build := func(args ...string) {
		if out, err := exec.Command("cc", args...).CombinedOutput(); err != nil {
			t.Fatalf("cc %v: %v\n%s", args, err, out)
		}
	}
	build(args...)
	build(append([]string{"-std=c11", "-O2", "-pthread", "-I../../libarm", "-I../../cshared", "-o", filepath.Join(dir, "load"), "../../samples/arm/load.c"}, srcs...)...)
	build("-O2", "-w", "-I../../libarm", "-o", filepath.Join(dir, "sample"), "../../samples/arm/sample.c",
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
	var got string
	defer func() {
		if t.Failed() {
			t.Logf("%s = %q, want %q", path, got, want)
		}
	}()
	testutil.Eventually(t, path+" = "+want, 2*time.Minute, func() bool {
		got = armGet(t, e, path)[path]
		return got == want
	})
}

// armWaitAtLeast waits until the counter at path reads n or more: a
// counter that moves on by itself passes any one value between two polls
// of a loaded machine.
func armWaitAtLeast(t *testing.T, e *env, path string, n int) {
	t.Helper()
	var got string
	testutil.Eventually(t, fmt.Sprintf("%s >= %d", path, n), 2*time.Minute, func() bool {
		got = armGet(t, e, path)[path]
		v, err := strconv.Atoi(got)
		return err == nil && v >= n
	})
}

// connectWait is ARM_CONNECT_WAIT for C and Go programs that must be
// registered before they measure: the first registration waits for the
// daemon's answer however slow a loaded machine makes it (one attempt of
// at most 2 s otherwise), so no instance ends before it is counted.
const connectWait = "ARM_CONNECT_WAIT=120"

// armKillInFlight kills c, a running SDK sample, while it is inside its
// transaction p: stopped (SIGSTOP) at a moment the daemon sees one
// instance in flight, so that the kill leaves exactly that one. It
// returns the count and lost at the kill.
func armKillInFlight(t *testing.T, e *env, c *exec.Cmd, p string) (count, lost int) {
	t.Helper()
	pid := c.Process.Pid
	var got map[string]string
	testutil.Eventually(t, "the sample stopped inside a transaction", 2*time.Minute, func() bool {
		armStop(t, pid)
		// An answer may be min_age (1 s, shipped) old: one asked for
		// later than that after the stop was read after it, with every
		// record the sample wrote before it.
		time.Sleep(minAge + 100*time.Millisecond)
		if got = armGet(t, e, p+"inflight", p+"count", p+"lost"); got[p+"inflight"] == "1" {
			return true
		}
		syscall.Kill(pid, syscall.SIGCONT)
		return false
	})
	c.Process.Kill()
	c.Wait()
	count, _ = strconv.Atoi(got[p+"count"])
	lost, _ = strconv.Atoi(got[p+"lost"])
	return count, lost
}

// minAge is refresh.min_age as shipped (config's tests hold it): how old
// an answer may be.
const minAge = time.Second

// armStop stops process pid (SIGSTOP) and waits until it is stopped.
func armStop(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, syscall.WUNTRACED, nil); err != nil || !ws.Stopped() {
		t.Fatalf("waiting for pid %d to stop: %v %v", pid, ws, err)
	}
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
	c.Env = append(os.Environ(), "SUBAGENT_RUN_DIR="+e.runDir, connectWait)
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
	if out, err := exec.Command("go", "build", "-o", gobin, "../../samples/armload").CombinedOutput(); err != nil {
		t.Fatalf("go build armload: %v\n%s", err, out)
	}
	gc := exec.Command(gobin, strconv.Itoa(threads), strconv.Itoa(each))
	gc.Env = append(os.Environ(), "SUBAGENT_RUN_DIR="+e.runDir, connectWait)
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
	module, text, _, stderr, code := runMIB(t, e, "SUBAGENT-HOST-MIB", "--instances") // one host's module
	if code != 0 {
		t.Fatalf("subagent mib: %s", stderr)
	}
	for _, name := range []string{"rTimeARMTable", "rTimeARMTranTable", "rTimeARMTranCount", "rTimeARMTranMetric1"} {
		if !strings.Contains(text, "\n"+name+" OBJECT-TYPE") {
			t.Errorf("the module does not declare the table object %s", name)
		}
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
		mibNames, mibPaths = append(mibNames, "SUBAGENT-HOST-MIB::"+name+".0"), append(mibPaths, path)
	}
	for i, oid := range mibtest.Translate(t, mibtest.NetSNMPEnv(t), dirs, "SUBAGENT-HOST-MIB", []string{"-On"}, mibNames) {
		if want := armOID(t, e, mibPaths[i]); strings.TrimPrefix(oid, ".") != want {
			t.Errorf("%s translates to %s; the daemon serves %s there", mibNames[i], oid, want)
		}
	}

	// The SDK's sample, unchanged: one transaction a second. Its log
	// (ARM_LOGFILE) shows which transactions ended while it had no daemon.
	sampleLog := filepath.Join(t.TempDir(), "sample.log")
	sc := exec.Command(sample)
	sc.Env = append(os.Environ(), "SUBAGENT_RUN_DIR="+e.runDir, connectWait, "ARM_LOGFILE="+sampleLog, "ARM_RETRY=0.05")
	if err := sc.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sc.Process.Kill(); sc.Wait() }()
	sp := "RTime/ARM/ARMsampleprogram/Sample_transaction/"
	armWaitAtLeast(t, e, sp+"count", 1) // one a second: any value may be passed
	oid := armOID(t, e, sp+"count")

	// The daemon restarts under the sample, stopped meanwhile (SIGSTOP)
	// so that the old daemon takes all it finished: the library comes
	// back by itself, and the OIDs are the same (numbers persisted).
	armStop(t, sc.Process.Pid)
	frozen, err := os.ReadFile(sampleLog)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	e.start("--agentx", s.AgentXAddress)
	syscall.Kill(sc.Process.Pid, syscall.SIGCONT)
	armWaitAtLeast(t, e, sp+"count", 2)
	if again := armOID(t, e, sp+"count"); again != oid {
		t.Errorf("after the restart %s is %s, was %s", sp+"count", again, oid)
	}
	// Lost across the restart: only instances that ended before the
	// library registered again (the one in flight, and more on a slow
	// machine), none invented: at most the arm_stop lines logged after
	// the freeze and before "arm: connected".
	b, _ := os.ReadFile(sampleLog)
	gap, _, ok := strings.Cut(string(b[len(frozen):]), "arm: connected")
	if !ok {
		t.Fatalf("the sample's log shows no registration after the restart:\n%s", b[len(frozen):])
	}
	lost, _ := strconv.Atoi(armGet(t, e, sp+"lost")[sp+"lost"])
	if ended := strings.Count(gap, ": arm_stop: "); lost > ended {
		t.Errorf("lost %d across one restart; only %d instances ended before the library registered again", lost, ended)
	}
	// Killed inside its transaction, the sample loses exactly one more.
	count, before := armKillInFlight(t, e, sc, sp)
	armWait(t, e, sp+"lost", strconv.Itoa(before+1))
	if got := armGet(t, e, sp+"count", sp+"inflight"); got[sp+"count"] != strconv.Itoa(count) || got[sp+"inflight"] != "0" {
		t.Errorf("after the kill: count %s inflight %s, want %d and 0", got[sp+"count"], got[sp+"inflight"], count)
	}
}

// armAgent registers this test process with the daemon's arm.sock.
func armAgent(t *testing.T, e *env) *arm.Agent {
	t.Helper()
	ag := arm.Open(&arm.Options{Socket: filepath.Join(e.runDir, arm.SocketName), Retry: 50 * time.Millisecond, Wait: 2 * time.Minute})
	t.Cleanup(ag.Close)
	return ag
}

// subagent delete RTime/ARM/<app> removes an application and its
// transactions; the live process posting again re-creates it at the same
// OIDs (its numbers are kept).
func TestARMDeleteThroughTheCLI(t *testing.T) {
	e := newEnv(t)
	e.start()
	ag := armAgent(t, e)
	if !ag.Connected() {
		t.Fatalf("the agent did not register\n%s", e.daemonLog)
	}
	tr := ag.App("CLI Delete", "").Transaction("t", "")
	for range 2 {
		h := tr.Start()
		h.Stop(arm.Good)
	}
	p := "RTime/ARM/CLIDelete/t/count"
	armWait(t, e, p, "2")
	oid := armOID(t, e, p)

	if _, stderr, code := e.run(append([]string{"delete", "RTime/ARM/CLIDelete"}, e.args()...)...); code != 0 {
		t.Fatalf("delete: exit %d %s\n%s", code, stderr, e.daemonLog)
	}
	if got := armGet(t, e, p); got[p] != "" {
		t.Fatalf("%s = %q after delete", p, got[p])
	}
	for path, want := range map[string]string{"RTime/ARM/CLIDelete": "no ARM application", "RTime/ARM/NoSuchApp": "no ARM application"} {
		if _, stderr, code := e.run(append([]string{"delete", path}, e.args()...)...); code == 0 || !strings.Contains(stderr, want) {
			t.Errorf("delete %s: exit %d %q, want a refusal saying %q", path, code, stderr, want)
		}
	}
	h := tr.Start()
	h.Stop(arm.Good)
	armWait(t, e, p, "1")
	if again := armOID(t, e, p); again != oid {
		t.Errorf("re-created at %s, was %s", again, oid)
	}
}

// Under prlimit --nofile=300, ~1,000 connections held on arm.sock run the
// daemon out of descriptors: it slows accepting down instead of exiting
// (it exited: "accept4: too many open files"), answers on the control
// socket again and registers ARM programs once the attacker lets go.
func TestARMSurvivesDescriptorExhaustion(t *testing.T) {
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Fatalf("prlimit (util-linux) is needed: %v", err)
	}
	e := newEnv(t)
	e.wrap = []string{"prlimit", "--nofile=300", "--"}
	// Many users together could hold this many: lift the per-user limit so
	// that one test process reaches the descriptor limit.
	t.Setenv("SUBAGENT_ARM_MAX_PROCESSES", "2000")
	t.Setenv("SUBAGENT_ARM_MAX_PROCESSES_PER_UID", "2000")
	e.start()
	sock := filepath.Join(e.runDir, arm.SocketName)
	var held []net.Conn
	for range 1000 {
		c, err := net.DialTimeout("unix", sock, time.Second)
		if err != nil {
			break
		}
		held = append(held, c)
	}
	if len(held) < 400 {
		t.Fatalf("only %d connections to arm.sock; the attack needs more than the daemon's 300 descriptors", len(held))
	}
	testutil.Eventually(t, "the daemon to run out of descriptors and slow down", time.Minute, func() bool {
		return strings.Contains(e.daemonLog.String(), "arm socket: accept failed; slowing down")
	})
	select {
	case <-e.daemonExited:
		t.Fatalf("the daemon exited under the attack: %v", e.daemonErr)
	default:
	}
	for _, c := range held {
		c.Close()
	}
	testutil.Eventually(t, "the control socket to answer", time.Minute, func() bool {
		_, _, code := e.run(append([]string{"get", "CPU/cpu0/idle"}, e.args()...)...)
		return code == 0
	})
	ag := armAgent(t, e)
	testutil.Eventually(t, "an ARM program to register", time.Minute, ag.Connected)
	h := ag.App("After Attack", "").Transaction("t", "").Start()
	h.Stop(arm.Good)
	armWait(t, e, "RTime/ARM/AfterAttack/t/count", "1")
	select {
	case <-e.daemonExited:
		t.Fatalf("the daemon exited: %v", e.daemonErr)
	default:
	}
}

// Under the shipped configuration (no arm setting overridden), a C and a
// Go program doing start/stop pairs in a tight loop for 3 s, then 50 C
// processes at once, lose nothing: count is every pair sent, lost 0 (it
// was 32,768 of 5,000,000 with the ring alone). Each program registers
// before its loop (ARM_CONNECT_WAIT): a pair that ends before its process
// is registered is lost by design (ARM 2.0: without an agent the calls
// are no-ops), and 50 registrations at once on a busy machine can take
// longer than one attempt's 2 s.
func TestARMTightLoopsLoseNothingUnderShippedSettings(t *testing.T) {
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "SUBAGENT_ARM_") {
			t.Fatalf("%s is set: this test is about the shipped settings", kv)
		}
	}
	dir := t.TempDir()
	pair := filepath.Join(dir, "pair")
	args := append([]string{"-std=c11", "-O2", "-pthread", "-Wall", "-Wextra", "-Werror", "-I../../libarm", "-I../../cshared", "-o", pair, "../../samples/arm/pair.c"}, libarmSources()...)
	if out, err := exec.Command("cc", args...).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	gobin := filepath.Join(dir, "armload")
	if out, err := exec.Command("go", "build", "-o", gobin, "../../samples/armload").CombinedOutput(); err != nil {
		t.Fatalf("go build armload: %v\n%s", err, out)
	}
	e := newEnv(t)
	e.start()
	run := func(bin string, args ...string) string {
		c := exec.Command(bin, args...)
		c.Env = append(os.Environ(), "SUBAGENT_RUN_DIR="+e.runDir, connectWait)
		out, err := c.Output()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", bin, args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	pairs := func(out string) int {
		f := strings.Fields(out)
		n, err := strconv.Atoi(f[min(1, len(f)-1)])
		if len(f) < 2 || f[0] != "pairs" || err != nil || n < 100000 {
			t.Fatalf("printed %q, want pairs and at least 100000", out)
		}
		return n
	}
	check := func(p string, want int) {
		t.Helper()
		armWait(t, e, p+"count", strconv.Itoa(want))
		if got := armGet(t, e, p+"lost", p+"inflight"); got[p+"lost"] != "0" || got[p+"inflight"] != "0" {
			t.Errorf("%s: lost %q inflight %q, want 0 and 0", p, got[p+"lost"], got[p+"inflight"])
		}
	}

	c := pairs(run(pair, "-t", "3"))
	check("RTime/ARM/bench/pair/", c)
	out := run(gobin, "-for", "3s")
	if !strings.HasSuffix(out, "connected true") {
		t.Fatalf("armload: %q", out)
	}
	check("RTime/ARM/GoPair/pair/", pairs(out))
	t.Logf("one C thread: %d pairs in 3 s; one goroutine: %s", c, out)

	// 50 processes at once, 200,000 pairs each (and 1,000 to warm up).
	const procs, each = 50, 200000
	var cmds []*exec.Cmd
	for range procs {
		cmd := exec.Command(pair, strconv.Itoa(each))
		cmd.Env = append(os.Environ(), "SUBAGENT_RUN_DIR="+e.runDir, connectWait)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("pair: %v", err)
		}
	}
	check("RTime/ARM/bench/pair/", c+procs*(each+1000))
}
