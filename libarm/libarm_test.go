package libarm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/arm"
	"github.com/perfagent/subagent/client/armring"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/rtimearm"
	"github.com/perfagent/subagent/rtimearm/armtest"
)

// daemon is the daemon's ARM server for the C programs of a test.
type daemon struct {
	*armtest.Daemon
	t *testing.T
}

// startDaemon runs the daemon's ARM server in dir (a new one if "").
func startDaemon(t *testing.T, dir string, g armring.Geometry) *daemon {
	t.Helper()
	return startDaemonWith(t, dir, g, rtimearm.Limits{MaxApps: 16, MaxTrans: 64})
}

func startDaemonWith(t *testing.T, dir string, g armring.Geometry, lim rtimearm.Limits) *daemon {
	t.Helper()
	return &daemon{armtest.Start(t, armtest.Options{Dir: dir, Geometry: g, Limits: lim}), t}
}

// connectWait is ARM_CONNECT_WAIT for the programs that must register
// before measuring: arm_init waits for the daemon's answer however slow a
// loaded machine makes it, instead of one attempt of at most 2 s.
const connectWait = "ARM_CONNECT_WAIT=120"

// cmdIn runs bin against the daemon in run, registered before arm_init
// returns.
func cmdIn(run, bin string, args ...string) *exec.Cmd {
	c := exec.Command(bin, args...)
	c.Env = append(os.Environ(), "SUBAGENT_RUN_DIR="+run, connectWait)
	return c
}

func (d *daemon) value(path string) (spmiwire.Value, bool) {
	n, err := d.Snapshot().Lookup(path)
	if err != nil {
		return spmiwire.NoValue, false
	}
	return n.Value, true
}

// waitFor waits until path has want.
func (d *daemon) waitFor(path string, want uint64) {
	d.t.Helper()
	testutil.Eventually(d.t, fmt.Sprintf("%s = %d", path, want), time.Minute, func() bool {
		v, _ := d.value(path)
		return v.OK() && v.Uint64() == want
	})
}

// killInFlight kills c, a running SDK sample, while it is inside its
// transaction p: stopped (SIGSTOP) at a moment the daemon sees one
// instance in flight, so that the kill leaves exactly that one. It
// returns the count at the kill.
func (d *daemon) killInFlight(c *exec.Cmd, p string) uint64 {
	d.t.Helper()
	pid := c.Process.Pid
	testutil.Eventually(d.t, "the sample stopped inside a transaction", time.Minute, func() bool {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			d.t.Fatal(err)
		}
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(pid, &ws, syscall.WUNTRACED, nil); err != nil || !ws.Stopped() {
			d.t.Fatalf("waiting for the sample to stop: %v %v", ws, err)
		}
		if v, _ := d.value(p + "inflight"); v.Uint64() == 1 {
			return true
		}
		syscall.Kill(pid, syscall.SIGCONT)
		return false
	})
	count, _ := d.value(p + "count")
	c.Process.Kill()
	c.Wait()
	return count.Uint64()
}

func (d *daemon) cmd(bin string, args ...string) *exec.Cmd { return cmdIn(d.Dir, bin, args...) }

func TestLoadCountsEveryInstanceExactly(t *testing.T) {
	dir := built(t)
	const threads, each = 8, 2000
	d := startDaemon(t, "", armring.Geometry{Slots: 32768, Apps: 4, Trans: 8})
	out, err := d.cmd(filepath.Join(dir, "load"), "8", "2000").CombinedOutput()
	if err != nil {
		t.Fatalf("load: %v\n%s", err, out)
	}
	p := "RTime/ARM/LoadTest/LoadTransaction/"
	d.waitFor(p+"count", threads*each)
	for name, want := range map[string]uint64{"aborted": threads, "failed": 2 * threads, "lost": 0, "inflight": 0, "metric1": 2 * threads * each} {
		if v, _ := d.value(p + name); v.Uint64() != want {
			t.Errorf("%s = %v, want %d", name, v, want)
		}
	}
	mn, _ := d.value(p + "respmin")
	avg, _ := d.value(p + "respavg")
	mx, _ := d.value(p + "respmax")
	if !(mn.Float64() <= avg.Float64() && avg.Float64() <= mx.Float64()+1) {
		t.Errorf("respmin %v respavg %v respmax %v", mn, avg, mx)
	}
	if v, _ := d.value(p + "metric2max"); v.Float64() != 7+4 {
		t.Errorf("metric2max (queue length) = %v, want 11", v)
	}
	if v, _ := d.value(p + "string"); v.TextValue() != "part-42" {
		t.Errorf("string = %q, want part-42", v.TextValue())
	}
	if v, _ := d.value(p + "detail"); v.TextValue() != "many threads" {
		t.Errorf("detail = %q", v.TextValue())
	}
}

func TestSDKSampleRunsAndLogs(t *testing.T) {
	dir := built(t)
	d := startDaemon(t, "", armring.Geometry{Slots: 64, Apps: 4, Trans: 8})
	logf := filepath.Join(t.TempDir(), "logfile")
	c := d.cmd(filepath.Join(dir, "sample"))
	c.Env = append(c.Env, "ARM_LOGFILE="+logf)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { c.Process.Kill(); c.Wait() }()
	const p = "RTime/ARM/ARMsampleprogram/Sample_transaction/"
	d.waitFor(p+"count", 2)
	// sleep(1) inside: a second or more (milliseconds, not another unit).
	v, _ := d.value(p + "resptime")
	if ms := v.Uint64(); ms < 990 || ms > 60000 {
		t.Errorf("resptime %d ms for sleep(1)", ms)
	}
	// Killed inside a transaction: that instance is lost, none invented.
	count := d.killInFlight(c, p)
	d.waitFor(p+"lost", 1)
	d.waitFor(p+"inflight", 0)
	if v, _ := d.value(p + "count"); v.Uint64() != count {
		t.Errorf("count %v after the kill, was %d", v, count)
	}

	b, err := os.ReadFile(logf)
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	for _, re := range []string{
		`(?m)^\d\d:\d\d:\d\d\.\d{3}: arm_init: Application <ARM sample program> User <\S+> = Appl_id <\d+>$`,
		`(?m)^\d\d:\d\d:\d\d\.\d{3}: arm_getid: Application <ARM sample program> User <\S+> Transaction <Sample_transaction> Detail <First Transaction in Sample program>$`,
		`(?m)^\d\d:\d\d:\d\d\.\d{3}: arm_getid: .* Transaction <Sample_transaction> = Tran_id <\d+>$`,
		`(?m)^\d\d:\d\d:\d\d\.\d{3}: arm_start: .* Transaction <Sample_transaction> = Start_handle <\d+>$`,
		`(?m)^\d\d:\d\d:\d\d\.\d{3}: arm_stop: .* Start_handle <\d+> Status <0>$`,
	} {
		if !regexp.MustCompile(re).MatchString(log) {
			t.Errorf("log lacks %s:\n%s", re, log)
		}
	}
}

func TestInvokeArmFalseIsANoOpLibrary(t *testing.T) {
	dir := built(t)
	d := startDaemon(t, "", armring.Geometry{Slots: 64, Apps: 4, Trans: 8})
	c := d.cmd(filepath.Join(dir, "load"), "2", "10")
	c.Env = append(c.Env, "INVOKE_ARM=false")
	out, err := c.CombinedOutput()
	// Every call returns 0, which load takes as ids: it runs to the end.
	if err != nil || !strings.Contains(string(out), "done 20") {
		t.Fatalf("load with INVOKE_ARM=false: %v\n%s", err, out)
	}
	if _, ok := d.value("RTime/ARM/LoadTest"); ok {
		t.Fatal("a disabled library registered its application")
	}
}

func TestCorrelatedPairRecordsTheParent(t *testing.T) {
	dir := built(t)
	d := startDaemon(t, "", armring.Geometry{Slots: 64, Apps: 4, Trans: 8})
	out, err := d.cmd(filepath.Join(dir, "corr")).CombinedOutput()
	if err != nil {
		t.Fatalf("corr: %v\n%s", err, out)
	}
	d.waitFor("RTime/ARM/CorrClient/Request/count", 1)
	d.waitFor("RTime/ARM/CorrServer/Serve/correlated", 1)
	if v, _ := d.value("RTime/ARM/CorrServer/Serve/parent"); v.TextValue() != "CorrClient/Request" {
		t.Errorf("parent %q, want CorrClient/Request", v.TextValue())
	}
	if v, _ := d.value("RTime/ARM/CorrClient/Request/correlated"); v.Uint64() != 0 {
		t.Errorf("the client has no parent, correlated = %v", v)
	}
	// The call graph: exactly the one edge, one instance, the server's
	// time within the client's request.
	es := armtest.Edges(t, d.Snapshot())
	if len(es) != 1 || es[0].Parent != "CorrClient/Request" || es[0].Child != "CorrServer/Serve" || es[0].Count != 1 || es[0].Failures != 0 {
		t.Fatalf("call graph %+v, want CorrClient/Request > CorrServer/Serve once", es)
	}
	if e := es[0]; e.ShareUnmeasured || e.Total < 1 || e.Share <= 0 || e.Share > 100 {
		t.Errorf("edge: %v ms, %v %% of the request: want at least the 1 ms the server sleeps, within the request", e.Total, e.Share)
	}
}

func TestDaemonAbsentThenRestarted(t *testing.T) {
	dir := built(t)
	run, err := os.MkdirTemp("", "arm")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(run)
	// No daemon: the program runs, measuring nothing; its ids are valid
	// (the sample prints a complaint for a negative one) and a whole
	// transaction passes. Retries every 20 ms (ARM_RETRY) find the daemon.
	logf := filepath.Join(t.TempDir(), "logfile")
	c := exec.Command(filepath.Join(dir, "sample"))
	c.Env = append(os.Environ(), "SUBAGENT_RUN_DIR="+run, "ARM_LOGFILE="+logf, "ARM_RETRY=0.02")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { c.Process.Kill(); c.Wait() }()
	testutil.Eventually(t, "a transaction of the sample in ARM_LOGFILE", time.Minute, func() bool {
		b, _ := os.ReadFile(logf)
		return strings.Contains(string(b), ": arm_stop: ")
	})
	b, _ := os.ReadFile(logf)
	for _, re := range []string{`arm_init: .* = Appl_id <[1-9]\d*>`, `arm_getid: .* = Tran_id <[1-9]\d*>`} {
		if !regexp.MustCompile(re).Match(b) {
			t.Fatalf("without a daemon, the log lacks %s (a valid id):\n%s", re, b)
		}
	}
	if strings.Contains(string(b), "arm: connected") {
		t.Fatalf("connected without a daemon:\n%s", b)
	}
	g := armring.Geometry{Slots: 64, Apps: 4, Trans: 8}
	d := startDaemon(t, run, g)
	// The library finds the daemon by itself and registers its names.
	d.waitFor("RTime/ARM/ARMsampleprogram/Sample_transaction/count", 2)
	if n := armtest.RingsMapped(t, c.Process.Pid); n != 1 {
		t.Fatalf("the sample maps %d rings, want 1", n)
	}
	d.Srv.Close()
	d2 := startDaemon(t, run, g)
	d2.waitFor("RTime/ARM/ARMsampleprogram/Sample_transaction/count", 2)
	// It let the first daemon's ring go when that daemon went away (it kept
	// one per restart for its life, each counted against its user).
	if n := armtest.RingsMapped(t, c.Process.Pid); n != 1 {
		t.Errorf("after a daemon restart the sample maps %d rings, want 1 (the new daemon's)", n)
	}
}

func TestLogFileShowsMetricsAndStatusText(t *testing.T) {
	dir := built(t)
	d := startDaemon(t, "", armring.Geometry{Slots: 64, Apps: 4, Trans: 8})
	logf := filepath.Join(t.TempDir(), "logfile")
	c := d.cmd(filepath.Join(dir, "load"), "1", "2")
	c.Env = append(c.Env, "ARM_LOGFILE="+logf)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("load: %v\n%s", err, out)
	}
	b, err := os.ReadFile(logf)
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	for _, re := range []string{
		`(?m)^\d\d:\d\d:\d\d\.\d{3}: arm_getid: Application <Load Test> User <\S+> Transaction <Load Transaction> Metric Field <1> Type <1> Name <records written>$`,
		`(?m)^\d\d:\d\d:\d\d\.\d{3}: arm_getid: .* Metric Field <7> Type <10> Name <part number>$`,
		`(?m)^\d\d:\d\d:\d\d\.\d{3}: arm_start: .* Start_handle <\d+> Metric < records written > : <1000>$`,
		`(?m)^\d\d:\d\d:\d\d\.\d{3}: arm_update: Start_handle <\d+> Data <thread 0 started>$`,
		`(?m)^\d\d:\d\d:\d\d\.\d{3}: arm_stop: .* Start_handle <\d+> Metric < records written > : <1002>$`,
		`(?m)^\d\d:\d\d:\d\d\.\d{3}: arm_stop: .* Start_handle <\d+> Metric < part number > : <part-42 +>$`,
		`(?m)^\d\d:\d\d:\d\d\.\d{3}: arm_stop: .* Status <1>$`,
		`(?m)^\d\d:\d\d:\d\d\.\d{3}: arm_end: Application <Load Test> User <\S+> appl_id <\d+>$`,
	} {
		if !regexp.MustCompile(re).MatchString(log) {
			t.Errorf("log lacks %s", re)
		}
	}
	if t.Failed() {
		t.Log(log)
	}
}

func TestBadCallsReturnNegativeAndAreLogged(t *testing.T) {
	dir := t.TempDir()
	bin := buildStatic(t, dir, "bad", `#include <stdio.h>
#include "arm.h"
int main(void) {
    int32 a = arm_init("bad calls", 0, 0, 0, 0);
    int32 t = arm_getid(a, "t", 0, 0, 0, 0);
    char small[8] = {1, 0, 0, 0};
    int32 h = arm_start(t, 0, small, sizeof small);      /* too short: refused, start still works */
    int r[8];                                              /* in this order: C leaves argument order open */
    r[0] = arm_getid(-5, "x", 0, 0, 0, 0) < 0;             /* negative appl_id: no-op */
    r[1] = arm_start(-1, 0, 0, 0) < 0;                     /* negative tran_id: no-op */
    r[2] = arm_stop(-1, ARM_GOOD, 0, 0, 0) < 0;            /* negative handle: no-op */
    r[3] = arm_start(12345, 0, 0, 0) < 0;                  /* unknown tran_id */
    r[4] = arm_stop(h, 7, 0, 0, 0) < 0;                    /* bad status */
    r[5] = arm_stop(h, ARM_GOOD, 0, 0, 0) == 0;            /* then a good stop */
    r[6] = arm_stop(h, ARM_GOOD, 0, 0, 0) < 0;             /* a second stop */
    r[7] = arm_end(a, 0, 0, 0) == 0;
    r[7] = r[7] && arm_start(t, 0, 0, 0) < 0;              /* ended: inactive */
    for (int i = 0; i < 8; i++)
        printf(i ? " %d" : "%d", r[i]);
    printf("\n");
    return 0;
}
`)
	d := startDaemon(t, "", armring.Geometry{Slots: 64, Apps: 4, Trans: 8})
	logf := filepath.Join(dir, "log")
	c := d.cmd(bin)
	c.Env = append(c.Env, "ARM_LOGFILE="+logf)
	out, err := c.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "1 1 1 1 1 1 1 1" {
		t.Fatalf("checks: %v %q (1 = as the guides say)", err, out)
	}
	d.waitFor("RTime/ARM/badbuffers", 1)
	d.waitFor("RTime/ARM/badcalls/t/count", 1)
	b, _ := os.ReadFile(logf)
	for _, want := range []string{"arm_start: ERROR: tran_id <12345> is not registered", "Status <7> is not 0, 1 or 2", "is not an open instance", "is not active"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("log lacks %q:\n%s", want, b)
		}
	}
}

// Use counts as PTX describes them: two arm_init need two arm_end; at zero
// the transactions are inactive, and a new arm_init does not reactivate
// them until arm_getid registers them again.
func TestUseCountsDeactivateAndReactivate(t *testing.T) {
	bin := buildStatic(t, t.TempDir(), "uses", `#include <stdio.h>
#include "arm.h"
static int live(int32 tran) {
    int32 h = arm_start(tran, 0, 0, 0);
    return h >= 0 && arm_stop(h, ARM_GOOD, 0, 0, 0) == 0;
}
int main(void) {
    int32 a1 = arm_init("Use Counts", 0, 0, 0, 0);
    int32 a2 = arm_init("Use Counts", 0, 0, 0, 0);
    int32 t = arm_getid(a1, "Tran", 0, 0, 0, 0);
    int r[6];
    r[0] = a1 == a2 && a1 > 0;
    r[1] = arm_end(a1, 0, 0, 0) == 0 && live(t);   /* one use left: active */
    r[2] = arm_end(a1, 0, 0, 0) == 0 && !live(t);  /* zero: inactive */
    arm_end(a1, 0, 0, 0);                          /* one too many: stays at zero, */
    r[3] = arm_init("UseCounts", 0, 0, 0, 0) == a1 && !live(t); /* so one init (same key) activates; tran not back */
    r[4] = arm_getid(a1, "Tran", 0, 0, 0, 0) == t && live(t);   /* re-registered */
    r[5] = arm_end(a1, 0, 0, 0) == 0 && !live(t);
    for (int i = 0; i < 6; i++)
        printf(i ? " %d" : "%d", r[i]);
    printf("\n");
    return 0;
}
`)
	d := startDaemon(t, "", armring.Geometry{Slots: 64, Apps: 4, Trans: 8})
	out, err := d.cmd(bin).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "1 1 1 1 1 1" {
		t.Fatalf("checks: %v %q (1 = as PTX describes)", err, out)
	}
	d.waitFor("RTime/ARM/UseCounts/Tran/count", 2) // the two live() that should count
}

// buildStatic writes a C program into dir and links it with libarm.a.
func buildStatic(t *testing.T, dir, name, src string) string {
	t.Helper()
	file := filepath.Join(dir, name+".c")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, name)
	if err := cc("-I.", "-o", bin, file, filepath.Join(built(t), "libarm.a"), "-pthread"); err != nil {
		t.Fatal(err)
	}
	return bin
}

// A program the daemon refuses (here: arm.max_processes is taken) runs as
// with no daemon: every call succeeds, nothing is printed, the refusal is
// in ARM_LOGFILE only, and it asks again after 10 retry periods, then 20,
// not every period. A refusal ends ARM_CONNECT_WAIT's wait.
func TestRefusedProgramIsASilentNoOp(t *testing.T) {
	dir := built(t)
	d := startDaemonWith(t, "", armring.Geometry{Slots: 64, Apps: 4, Trans: 8}, rtimearm.Limits{MaxApps: 16, MaxTrans: 64, MaxProcs: 1})
	occupant := arm.Open(&arm.Options{Socket: d.Socket, Retry: time.Hour, Wait: armtest.OpenWait})
	defer occupant.Close()
	if !occupant.Connected() {
		t.Fatal("the occupant did not register")
	}

	logf := filepath.Join(t.TempDir(), "logfile")
	c := d.cmd(filepath.Join(dir, "load"), "2", "10")
	c.Env = append(c.Env, "ARM_LOGFILE="+logf)
	out, err := c.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "done 20" {
		t.Fatalf("refused load: %v %q, want it to run through saying only done 20", err, out)
	}
	b, _ := os.ReadFile(logf)
	const refusal = "arm: the daemon refused this process: 1 rings are held, by registered processes and by processes that still map theirs, the limit (arm.max_processes)"
	// arm_init logs once its registration is over: after one refusal.
	if before, _, ok := strings.Cut(string(b), ": arm_init: "); !ok || strings.Count(before, refusal) != 1 {
		t.Errorf("ARM_LOGFILE does not show arm_init returning after exactly one refusal:\n%s", b)
	}
	d.waitFor("RTime/ARM/refused", 1)
	if _, ok := d.value("RTime/ARM/LoadTest"); ok {
		t.Fatal("a refused program's application is served")
	}

	// A running program refused asks again after 10 retry periods (ARM_RETRY,
	// 20 ms here), then 20, and prints only the sample's banner. Each
	// refusal is logged with its time after the sleep before it.
	outf, err := os.Create(filepath.Join(t.TempDir(), "sample.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer outf.Close()
	sampleLog := filepath.Join(t.TempDir(), "sample.log")
	sc := d.cmd(filepath.Join(dir, "sample"))
	sc.Env = append(sc.Env, "ARM_LOGFILE="+sampleLog, "ARM_RETRY=0.02")
	sc.Stdout, sc.Stderr = outf, outf
	if err := sc.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sc.Process.Kill(); sc.Wait() }()
	stamp := regexp.MustCompile(`(?m)^(\d\d):(\d\d):(\d\d)\.(\d{3}): ` + regexp.QuoteMeta(refusal) + `$`)
	var at [][]string
	testutil.Eventually(t, "three refusals of the sample in ARM_LOGFILE", time.Minute, func() bool {
		b, _ := os.ReadFile(sampleLog)
		at = stamp.FindAllStringSubmatch(string(b), -1)
		return len(at) >= 3
	})
	ms := func(m []string) int {
		n := 0
		for i, unit := range []int{3600000, 60000, 1000, 1} {
			v, _ := strconv.Atoi(m[i+1])
			n += v * unit
		}
		return n
	}
	for i, periods := range []int{10, 20} {
		// Milliseconds of the local time of day; -1 for their truncation.
		if gap := (ms(at[i+1]) - ms(at[i]) + 86400000) % 86400000; gap < periods*20-1 {
			t.Errorf("refusal %d came %d ms after the one before, want at least %d retry periods (%d ms)", i+2, gap, periods, periods*20)
		}
	}
	if v, _ := d.value("RTime/ARM/refused"); v.Uint64() < 4 {
		t.Errorf("refused %v, want the load's one and the sample's three", v)
	}
	b, _ = os.ReadFile(outf.Name())
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.HasPrefix(line, "arm-sample: ") {
			t.Errorf("the refused sample printed %q besides its banner", line)
		}
	}
}

// An application the daemon cannot number (here: beyond uid's share of
// arm.max_application_names_per_uid, 2) is refused to the program itself:
// arm_init returns -5 (the refusal code, docs/ARM.md), arm_getid on it
// too, while the applications within the share are registered and served.
// A second arm_init of the refused name is refused again; nothing else
// disappears from the tree.
func TestNumberingRefusalReachesArmInit(t *testing.T) {
	bin := buildStatic(t, t.TempDir(), "capped", `#include <stdio.h>
#include "arm.h"
int main(void) {
    int32 a1 = arm_init("First App", "*", 0, 0, 0);
    int32 a2 = arm_init("Second App", "*", 0, 0, 0);
    int32 a3 = arm_init("Third App", "*", 0, 0, 0);
    int32 t1 = arm_getid(a1, "T", 0, 0, 0, 0);
    int32 t2 = arm_getid(a2, "T", 0, 0, 0, 0);
    int32 h = arm_start(t1, 0, 0, 0);
    arm_stop(h, ARM_GOOD, 0, 0, 0);
    h = arm_start(t2, 0, 0, 0);
    arm_stop(h, ARM_GOOD, 0, 0, 0);
    printf("%d %d %d %d\n", a1 > 0, a2 > 0, a3, arm_init("ThirdApp", 0, 0, 0, 0));
    return 0;
}
`)
	d := startDaemonWith(t, "", armring.Geometry{Slots: 64, Apps: 4, Trans: 8},
		rtimearm.Limits{MaxApps: 16, MaxTrans: 64, MaxAppNamesPerUID: 2})
	logf := filepath.Join(t.TempDir(), "log")
	c := d.cmd(bin)
	c.Env = append(c.Env, "ARM_LOGFILE="+logf)
	out, err := c.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "1 1 -5 -5" {
		t.Fatalf("capped: %v %q, want the first two registered and the third refused with -5, twice", err, out)
	}
	d.waitFor("RTime/ARM/FirstApp/T/count", 1)
	d.waitFor("RTime/ARM/SecondApp/T/count", 1)
	if _, ok := d.value("RTime/ARM/ThirdApp"); ok {
		t.Error("the refused application is served")
	}
	if v, _ := d.value("RTime/ARM/errors"); v.Uint64() == 0 {
		t.Error("the refusal is not counted in RTime/ARM/errors")
	}
	b, _ := os.ReadFile(logf)
	if !strings.Contains(string(b), "arm_init: ERROR: Application <Third App>: refused by the daemon") {
		t.Errorf("ARM_LOGFILE does not show the refusal:\n%s", b)
	}

	// arm_getid on an application refused while the program runs (no
	// ARM_CONNECT_WAIT: arm_init returned its id before the daemon read
	// the entry) returns the refusal once the daemon has answered.
	late := buildStatic(t, t.TempDir(), "late", `#include <stdio.h>
#include <unistd.h>
#include "arm.h"
int main(void) {
    int32 a = arm_init("Fourth App", 0, 0, 0, 0);
    int32 r = 0;
    for (int i = 0; i < 120000 && (r = arm_getid(a, "T", 0, 0, 0, 0)) > 0; i++)
        usleep(1000); /* until the daemon's verdict, at most 2 minutes */
    printf("%d %d\n", a > 0, r);
    return 0;
}
`)
	lc := exec.Command(late)
	lc.Env = append(os.Environ(), "SUBAGENT_RUN_DIR="+d.Dir)
	var lout strings.Builder
	lc.Stdout, lc.Stderr = &lout, &lout
	if err := lc.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- lc.Wait() }()
	var lerr error
	testutil.Eventually(t, "the late program ends", 2*time.Minute, func() bool {
		d.Snapshot() // a drain: the daemon reads the entry
		select {
		case lerr = <-done:
			return true
		default:
			return false
		}
	})
	if lerr != nil || strings.TrimSpace(lout.String()) != "1 -5" {
		t.Fatalf("late: %v %q, want arm_init's id, then arm_getid -5", lerr, lout.String())
	}
}
