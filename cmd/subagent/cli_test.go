package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
)

// binary builds the subagent once per test run.
func binary(t *testing.T) string {
	t.Helper()
	if builtBinary != "" {
		return builtBinary
	}
	dir, err := os.MkdirTemp("", "sa-bin")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "subagent")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	builtBinary = bin
	return bin
}

var builtBinary string

func TestMain(m *testing.M) {
	if mode := os.Getenv(testModeEnv); mode != "" {
		os.Exit(runTestMode(mode))
	}
	code := m.Run()
	if builtBinary != "" {
		os.RemoveAll(filepath.Dir(builtBinary))
	}
	os.Exit(code)
}

// env is a daemon environment on the fixture /proc and /sys.
type env struct {
	t             *testing.T
	bin           string
	runDir, state string
	proc, sys     string
	daemon        *exec.Cmd
	wrap          []string // command and arguments the daemon runs under (prlimit)
	daemonLog     *testutil.Buffer
	// daemonExited is closed when the daemon has exited; daemonErr is
	// its Wait error, to read only after that.
	daemonExited chan struct{}
	daemonErr    error
	stopped      bool
}

func newEnv(t *testing.T) *env {
	root, _ := filepath.Abs("../../hoststats/testdata")
	tmp := t.TempDir()
	return &env{t: t, bin: binary(t), runDir: filepath.Join(tmp, "run"), state: filepath.Join(tmp, "state"),
		proc: filepath.Join(root, "proc"), sys: filepath.Join(root, "sys")}
}

func (e *env) args(extra ...string) []string {
	return append([]string{"--run-dir", e.runDir, "--state-dir", e.state, "--proc-root", e.proc, "--sys-root", e.sys}, extra...)
}

// run runs a CLI command with a time bound and returns stdout, stderr and the exit code.
func (e *env) run(args ...string) (string, string, int) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.bin, args...)
	cmd.Env = append(os.Environ(), "SUBAGENT_CONFIG=")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("%v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

func (e *env) start(extra ...string) {
	e.t.Helper()
	e.daemonLog = &testutil.Buffer{}
	argv := append([]string{e.bin, "run"}, e.args(append([]string{"--listen", "none"}, extra...)...)...)
	argv = append(append([]string(nil), e.wrap...), argv...)
	e.daemon = exec.Command(argv[0], argv[1:]...)
	e.daemon.Stdout, e.daemon.Stderr = e.daemonLog, e.daemonLog
	if err := e.daemon.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.daemonExited, e.daemonErr, e.stopped = make(chan struct{}), nil, false
	go func() { e.daemonErr = e.daemon.Wait(); close(e.daemonExited) }()
	e.t.Cleanup(func() {
		e.stop()
		if e.t.Failed() {
			e.t.Logf("daemon log, last lines:\n%s", testutil.Tail(e.daemonLog.String(), 40))
		}
	})
	sock := filepath.Join(e.runDir, "subagent.sock")
	deadline := time.Now().Add(time.Minute) // a loaded machine starts it slowly
	for time.Now().Before(deadline) {
		if _, err := os.Stat(sock); err == nil && strings.Contains(e.daemonLog.String(), "control socket ready") {
			return
		}
		select {
		case <-e.daemonExited:
			e.t.Fatalf("daemon exited: %v", e.daemonErr)
		case <-time.After(50 * time.Millisecond):
		}
	}
	e.t.Fatalf("daemon did not open %s in time", sock)
}

// stop sends SIGTERM and waits for the exit; it returns the daemon's exit
// error the first time, nil after.
func (e *env) stop() error {
	if e.daemon == nil || e.stopped {
		return nil
	}
	e.stopped = true
	e.daemon.Process.Signal(syscall.SIGTERM)
	select {
	case <-e.daemonExited:
		return e.daemonErr
	case <-time.After(10 * time.Second):
		e.daemon.Process.Kill()
		<-e.daemonExited
		e.t.Errorf("daemon ignored SIGTERM for 10s")
		return errors.New("killed")
	}
}

func TestPeekAndGetLocallyOnFixture(t *testing.T) {
	e := newEnv(t)
	out, stderr, code := e.run(append([]string{"peek", "--oid", "CPU/"}, e.args()...)...)
	if code != 0 {
		t.Fatalf("peek exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "reading this host directly") {
		t.Errorf("local mode not announced: %q", stderr)
	}
	line := regexp.MustCompile(`(?m)^CPU/cpu0/idle\s+1\.1\.4\s+1\.3\.6\.1\.4\.1\.32473\.1\.1\.1\.4\.0\s+\S`)
	if !line.MatchString(out) {
		t.Fatalf("peek --oid CPU/ lacks the guide's example line:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^CPU/\s+1\s`).MatchString(out) {
		t.Fatalf("context paths end with /:\n%s", out)
	}
	if strings.Contains(out, "Agent/") {
		t.Fatal("the Agent context exists only in the daemon")
	}
	out, stderr, code = e.run(append([]string{"get", "CPU/cpu0/idle", "Mem/Real/size"}, e.args()...)...)
	if code != 0 || !regexp.MustCompile(`(?m)^CPU/cpu0/idle\s+\d+\s+counter`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^Mem/Real/size\s+[1-9]\d*\s+quantity`).MatchString(out) {
		t.Fatalf("get: exit %d\n%s\n%s", code, out, stderr)
	}
}

// An unknown path is an error on stderr with the nearest path that
// exists, and does not hide the values of the known ones.
func TestUnknownPathIsAClearError(t *testing.T) {
	e := newEnv(t)
	out, stderr, code := e.run(append([]string{"get", "CPU/cpu0/idle", "CPU/nosuch", "Disk/vda/busy"}, e.args()...)...)
	if code == 0 || !strings.Contains(stderr, "SiNotFound (188)") || !strings.Contains(stderr, "CPU/nosuch") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if !regexp.MustCompile(`^CPU/cpu0/idle\s+\d+\s+counter`).MatchString(out) || strings.Count(out, "\n") != 1 {
		t.Fatalf("want the known value alone on stdout:\n%s", out)
	}
	if !strings.Contains(stderr, `no context or statistic "Disk/vda/busy"; nearest that exists: Disk/sda/busy (subagent peek Disk/ lists them)`) {
		t.Fatalf("no nearest path for Disk/vda/busy: %q", stderr)
	}
	_, stderr, code = e.run(append([]string{"peek", "Nope/"}, e.args()...)...)
	if code == 0 || !strings.Contains(stderr, "Nope") {
		t.Fatalf("peek unknown: exit %d, stderr %q", code, stderr)
	}
}

func TestBadConfigurationStopsWithTheKeyNamed(t *testing.T) {
	e := newEnv(t)
	cfg := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(cfg, []byte("refresh:\n  min_age: often\n"), 0o644)
	_, stderr, code := e.run(append([]string{"run", "--config", cfg}, e.args()...)...)
	if code == 0 || !strings.Contains(stderr, `refresh.min_age: "often" is not a duration`) {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	// The later --proc-root wins.
	_, stderr, code = e.run(append([]string{"get", "CPU/cpu0/idle", "--local"}, e.args("--proc-root", "/nonexistent")...)...)
	if code == 0 || !strings.Contains(stderr, "host.proc_root: ") || strings.Contains(stderr, "ProcRoot") {
		t.Fatalf("bad proc root: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = e.run(append([]string{"run", "--agentx", "carrier-pigeon"}, e.args()...)...)
	if code == 0 || !strings.Contains(stderr, "agentx") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

func TestPeekAndGetAskTheRunningDaemon(t *testing.T) {
	e := newEnv(t)
	e.start()
	out, stderr, code := e.run(append([]string{"peek", "--oid"}, e.args()...)...)
	if code != 0 {
		t.Fatalf("peek: %d %s", code, stderr)
	}
	if strings.Contains(stderr, "directly") {
		t.Fatalf("peek did not use the daemon: %s", stderr)
	}
	if !regexp.MustCompile(`(?m)^Agent/uptime\s+12\.1\s+1\.3\.6\.1\.4\.1\.32473\.1\.12\.1\.0`).MatchString(out) {
		t.Fatalf("daemon peek lacks Agent/uptime:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^CPU/cpu0/idle\s+1\.1\.4\s`).MatchString(out) {
		t.Fatalf("daemon peek lacks CPU/cpu0/idle")
	}
	// Rates: counters per second in every row, even when the interval is
	// below refresh.min_age (1s): each read asks for a newer snapshot.
	rows := rateRows(t, e, []string{"Agent/refreshes", "CPU/cpu0/idle"}, "Agent/pid")
	pid := e.daemon.Process.Pid
	for _, r := range rows {
		if f := strings.Fields(r); f[3] != strconv.Itoa(pid) {
			t.Fatalf("row %q: want the daemon's pid %d as a level", r, pid)
		}
	}
	if err := e.stop(); err != nil {
		t.Fatalf("daemon stop: %v\n%s", err, e.daemonLog)
	}
	if _, err := os.Stat(filepath.Join(e.runDir, "subagent.sock")); err == nil {
		t.Fatal("control socket left behind")
	}
	if _, err := os.Stat(filepath.Join(e.state, "numbering.json")); err != nil {
		t.Fatalf("instance numbering not persisted: %v", err)
	}
}

// rateRows runs get --interval 300ms --count 4 on counters then levels,
// and checks that every row has a rate for each counter: 300ms is below
// refresh.min_age, so this fails if a read may return the previous
// read's snapshot (elapsed 0, printed "-").
func rateRows(t *testing.T, e *env, counters []string, levels ...string) []string {
	t.Helper()
	paths := append(append([]string{}, counters...), levels...)
	out, stderr, code := e.run(append([]string{"get", "--interval", "300ms", "--count", "4"}, e.args(paths...)...)...)
	if code != 0 {
		t.Fatalf("get --interval: exit %d %s", code, stderr)
	}
	rows := strings.Split(strings.TrimSpace(out), "\n")
	if len(rows) != 5 {
		t.Fatalf("want a header and 4 rows:\n%s", out)
	}
	// Times in 1/100 s are percent of time, other counters per second.
	rate := regexp.MustCompile(`^\d+\.\d\d(/s|%)$`)
	if h := strings.Fields(rows[0]); strings.Join(h, " ") != "time "+strings.Join(paths, " ") {
		t.Fatalf("header %q, want time and the full paths", rows[0])
	}
	for _, r := range rows[1:] {
		f := strings.Fields(r)
		if len(f) != 1+len(paths) {
			t.Fatalf("row %q: want time and %d columns\n%s", r, len(paths), out)
		}
		for i, p := range counters {
			if !rate.MatchString(f[1+i]) {
				t.Fatalf("row %q: %s is %q, want a rate\n%s", r, p, f[1+i], out)
			}
		}
	}
	return rows[1:]
}

func TestGetRatesBelowMinAgeLocally(t *testing.T) {
	e := newEnv(t)
	rows := rateRows(t, e, []string{"CPU/cpu0/idle", "Proc/pswitch"}, "Mem/Real/size")
	for _, r := range rows {
		if f := strings.Fields(r); f[3] != "16303428" {
			t.Fatalf("row %q: Mem/Real/size is a level, 16303428 in the fixture", r)
		}
	}
}
