package main

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
)

// The tests of a newcomer's first hour (issue 24): make run, then the
// README's examples.

// A daemon removes the run directory it made when it stops, so that a
// first look as root leaves no /run/subagent of root's; one it did not
// make stays, and so does the state.
func TestDaemonRemovesTheRunDirItMade(t *testing.T) {
	e := newEnv(t)
	e.start()
	if fi, err := os.Stat(e.runDir); err != nil || !fi.IsDir() {
		t.Fatalf("run directory while serving: %v", err)
	}
	// A second daemon on the same directory fails and takes nothing of the
	// first's with it.
	_, stderr, code := e.run(append([]string{"run"}, e.args("--listen", "none")...)...)
	if code == 0 || !strings.Contains(stderr, "another daemon serves") {
		t.Fatalf("second daemon: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := e.run(append([]string{"get", "Agent/pid"}, e.args()...)...); code != 0 || strings.Contains(stderr, "directly") {
		t.Fatalf("the first daemon after the second failed: exit %d\n%s", code, stderr)
	}
	if err := e.stop(); err != nil {
		t.Fatalf("stop: %v\n%s", err, e.daemonLog)
	}
	if _, err := os.Lstat(e.runDir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the run directory the daemon made is left: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.state, "numbering.json")); err != nil {
		t.Fatalf("state: %v", err)
	}

	e2 := newEnv(t)
	if err := os.MkdirAll(e2.runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	e2.start()
	if err := e2.stop(); err != nil {
		t.Fatalf("stop: %v\n%s", err, e2.daemonLog)
	}
	if ents, err := os.ReadDir(e2.runDir); err != nil || len(ents) != 0 {
		t.Fatalf("a run directory made beforehand: %v %v, want it kept and empty", ents, err)
	}
}

// make run, as the README's quick start has it, in a copy of the tree:
// ./bin/subagent peek finds the daemon while it runs, its state goes to
// bin/state, and Ctrl-C leaves no run directory.
func TestMakeRunKeepsItsStateInBin(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the daemon")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("the quick start needs make: %v", err)
	}
	dir, tmp := sourceTree(t), t.TempDir()
	runDir := filepath.Join(tmp, "run")
	// The run directory and the responder's port are the test's; the state
	// directory is make run's choice.
	// SUBAGENT_STATE_DIR is where the state would go if make run gave no
	// --state-dir (which wins over it): never the machine's.
	envState := filepath.Join(tmp, "env-state")
	env := append(os.Environ(), "SUBAGENT_CONFIG=", "SUBAGENT_RUN_DIR="+runDir, "SUBAGENT_STATE_DIR="+envState)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	mk := exec.CommandContext(ctx, "make", "run", "ARGS=--listen 127.0.0.1:0")
	mk.Dir, mk.Env = dir, env
	mk.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	mk.Cancel = func() error { return syscall.Kill(-mk.Process.Pid, syscall.SIGKILL) }
	log := &testutil.Buffer{}
	mk.Stdout, mk.Stderr = log, log
	if err := mk.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := mk.Process.Pid
	defer syscall.Kill(-pgid, syscall.SIGKILL)
	exited := make(chan error, 1)
	go func() { exited <- mk.Wait() }()
	testutil.Eventually(t, "make run to serve", 3*time.Minute, func() bool {
		select {
		case err := <-exited:
			t.Fatalf("make run exited: %v\n%s", err, log)
		default:
		}
		return strings.Contains(log.String(), "control socket ready")
	})

	peek := exec.Command("./bin/subagent", "peek", "Agent/")
	peek.Dir, peek.Env = dir, env
	out, err := peek.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Agent/uptime") || strings.Contains(string(out), "directly") {
		t.Fatalf("peek while make run runs: %v\n%s", err, out)
	}
	// Ctrl-C: the terminal interrupts make and the daemon.
	syscall.Kill(-pgid, syscall.SIGINT)
	testutil.Eventually(t, "make and the daemon to exit", 30*time.Second, func() bool {
		return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
	})
	if _, err := os.Lstat(envState); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("make run used the environment's state directory: %v\n%s", err, log)
	}
	if _, err := os.Stat(filepath.Join(dir, "bin", "state", "numbering.json")); err != nil {
		t.Fatalf("state not in bin/state: %v\n%s", err, log)
	}
	if m := regexp.MustCompile(`state_dir=(\S+)`).FindStringSubmatch(log.String()); m == nil || m[1] != filepath.Join(dir, "bin", "state") {
		t.Fatalf("make run's state_dir: %v\n%s", m, log)
	}
	if _, err := os.Lstat(runDir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("run directory left after Ctrl-C: %v\n%s", err, log)
	}
}

// SIGHUP to a daemon started without a file (make run) says that it
// reloads the built-in defaults, and how to reload a file.
func TestReloadWithoutAFileSaysSo(t *testing.T) {
	e := newEnv(t)
	e.start()
	if err := e.daemon.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "the reload", 10*time.Second, func() bool { return strings.Contains(e.daemonLog.String(), `msg=reloaded`) })
	if log := e.daemonLog.String(); !strings.Contains(log, "no configuration file") || !strings.Contains(log, "--config FILE") {
		t.Fatalf("no word on the missing file:\n%s", log)
	}

	withFile := newEnv(t)
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(cfg, []byte("log:\n  level: info\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	withFile.start("--config", cfg)
	if err := withFile.daemon.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "the reload", 10*time.Second, func() bool { return strings.Contains(withFile.daemonLog.String(), `msg=reloaded`) })
	if log := withFile.daemonLog.String(); strings.Contains(log, "no configuration file") {
		t.Fatalf("a daemon with a file is told it has none:\n%s", log)
	}
}

// A misspelled SUBAGENT_ variable stops the daemon before it makes
// anything, and the client commands too, naming the right spelling.
func TestMisspelledEnvStopsEveryCommand(t *testing.T) {
	e := newEnv(t)
	t.Setenv("SUBAGENT_SNMP_COMUNITY", "secret")
	const want = "unknown environment variable SUBAGENT_SNMP_COMUNITY: did you mean SUBAGENT_SNMP_COMMUNITY?"
	for _, args := range [][]string{{"run", "--listen", "none"}, {"get", "--local", "CPU/cpu0/idle"}, {"peek"}} {
		out, stderr, code := e.run(append(args, e.args()...)...)
		if code == 0 || !strings.Contains(stderr, want) || out != "" {
			t.Fatalf("%v: exit %d\nstdout %q\nstderr %q", args, code, out, stderr)
		}
	}
	if _, err := os.Lstat(e.runDir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the refused daemon made its run directory: %v", err)
	}
}

// A misspelled flag is told like a misspelled key or variable, and a
// setting only its domain package can judge (daemon.Check: here the
// AgentX address) stops the daemon before it makes anything, and the
// client commands too.
func TestMisspelledFlagAndDomainCheckStopEveryCommand(t *testing.T) {
	e := newEnv(t)
	for _, args := range [][]string{{"run", "--listen", "none"}, {"get", "--local", "CPU/cpu0/idle"}, {"peek"}} {
		out, stderr, code := e.run(append(append(args, "--comunity", "x"), e.args()...)...)
		if want := "unknown flag: --comunity: did you mean --community?"; code == 0 || !strings.Contains(stderr, want) || out != "" {
			t.Errorf("%v --comunity: exit %d\nstdout %q\nstderr %q, want %q", args, code, out, stderr, want)
		}
		out, stderr, code = e.run(append(append(args, "--agentx", "udp:127.0.0.1:705"), e.args()...)...)
		if want := "configuration: agentx: "; code == 0 || !strings.Contains(stderr, want) || out != "" {
			t.Errorf("%v --agentx udp:: exit %d\nstdout %q\nstderr %q, want %q", args, code, out, stderr, want)
		}
	}
	if _, err := os.Lstat(e.runDir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the refused daemon made its run directory: %v", err)
	}
}

// newNobodyEnv is an env whose daemon and CLI may run as nobody (uid
// 65534): the binary and the fixture /proc and /sys are reachable for it,
// wherever the checkout is. Making it needs root.
func newNobodyEnv(t *testing.T) *env {
	t.Helper()
	testutil.RequireRoot(t)
	e := newEnv(t)
	testutil.Traversable(t, filepath.Dir(e.bin))
	testutil.Traversable(t, e.proc)
	testutil.Traversable(t, e.sys)
	return e
}

// asNobody runs the CLI as uid 65534 without supplementary groups and
// returns its output and exit code.
func (e *env) asNobody(args ...string) (string, int) {
	e.t.Helper()
	return runAsNobody(e.t, append(os.Environ(), "SUBAGENT_CONFIG="), e.bin, append(args, e.args()...)...)
}

// runAsNobody runs bin with args as uid 65534 without supplementary
// groups, in the environment env, for 30 s at most, and returns its
// output and exit code.
func runAsNobody(t *testing.T, env []string, bin string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nobody := testutil.AsNobody(t, bin, args...)
	c := exec.CommandContext(ctx, nobody.Path, nobody.Args[1:]...)
	c.Env, c.SysProcAttr = env, nobody.SysProcAttr
	out, err := c.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// An ordinary user whom the socket does not let in gets the real cause,
// who may connect and whom to ask: never a quiet read of the host, which
// would look like the daemon's answer without its contexts.
func TestClientsSayWhyTheDaemonRefusedThem(t *testing.T) {
	e := newNobodyEnv(t)
	if err := os.MkdirAll(e.runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	testutil.Traversable(t, e.runDir)
	e.start() // control socket 0660, group root
	for _, args := range [][]string{{"get", "CPU/cpu0/idle"}, {"peek", "CPU/"}, {"delete", "RTime/LAN/example.org"}} {
		out, code := e.asNobody(args...)
		for _, want := range []string{"cannot ask the daemon at " + filepath.Join(e.runDir, "subagent.sock"), "permission denied",
			"group root", "control.group", "uid 65534 in control.allow_uids", "docs/SECURITY.md"} {
			if code == 0 || !strings.Contains(out, want) {
				t.Fatalf("%v as nobody: exit %d, output lacks %q:\n%s", args, code, want, out)
			}
		}
		if strings.Contains(out, "directly\n") || strings.Contains(out, "no daemon") || strings.Contains(out, "CPU/cpu0/idle ") {
			t.Fatalf("%v as nobody read the host instead:\n%s", args, out)
		}
	}

	// A socket of a group the user is not in: ask to join that group.
	g, err := user.LookupGroupId("100")
	if err != nil {
		t.Fatalf("group 100: %v", err)
	}
	e2 := newEnv(t)
	if err := os.MkdirAll(e2.runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	testutil.Traversable(t, e2.runDir)
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(cfg, []byte("control:\n  group: 100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e2.start("--config", cfg)
	out, code := e2.asNobody("get", "CPU/cpu0/idle")
	if want := "ask an admin to add you to group " + g.Name; code == 0 || !strings.Contains(out, want) || !strings.Contains(out, "--local") {
		t.Fatalf("exit %d, output lacks %q and --local:\n%s", code, want, out)
	}
}

// A run directory another user could have made is reported, not read
// around; a socket nobody answers on (a daemon killed) is no daemon.
func TestClientsFallBackOnlyWhenNoDaemonRuns(t *testing.T) {
	testutil.RequireRoot(t)
	e := newEnv(t)
	plantOpenDir(t, e.runDir)
	_, stderr, code := e.run(append([]string{"get", "CPU/cpu0/idle"}, e.args()...)...)
	if code == 0 || !strings.Contains(stderr, "not trusted") || !strings.Contains(stderr, "--run-dir or SUBAGENT_RUN_DIR") || strings.Contains(stderr, "directly\n") {
		t.Fatalf("untrusted run directory: exit %d\n%s", code, stderr)
	}

	stale := newEnv(t)
	if err := os.MkdirAll(stale.runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(stale.runDir, "subagent.sock"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	out, stderr, code := stale.run(append([]string{"get", "CPU/cpu0/idle"}, stale.args()...)...)
	if code != 0 || !strings.Contains(stderr, "no daemon at") || !strings.Contains(stderr, "reading this host directly") || !strings.HasPrefix(out, "CPU/cpu0/idle") {
		t.Fatalf("stale socket: exit %d\n%s%s", code, out, stderr)
	}
}

// get against the daemon: the values of the paths that exist are printed,
// each path that names nothing is on stderr with the nearest that exists,
// and the exit status is 1; with --interval the rates are of the others.
func TestGetPrintsTheKnownValuesBesideUnknownPaths(t *testing.T) {
	e := newEnv(t)
	e.start()
	out, stderr, code := e.run(append([]string{"get", "CPU/cpu0/idle", "Disk/vda/busy", "CPU/cpu0", "Mem/Real/size"}, e.args()...)...)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, stderr)
	}
	if !regexp.MustCompile(`(?m)^CPU/cpu0/idle\s+\d+\s+counter`).MatchString(out) || !regexp.MustCompile(`(?m)^Mem/Real/size\s+[1-9]\d*\s+quantity`).MatchString(out) {
		t.Fatalf("the known values are missing:\n%s", out)
	}
	if strings.Contains(out, "Disk/") || strings.Contains(out, "CPU/cpu0 ") {
		t.Fatalf("unknown paths on stdout:\n%s", out)
	}
	for _, want := range []string{
		`SiNotFound (188): no context or statistic "Disk/vda/busy"; nearest that exists: Disk/sda/busy (subagent peek Disk/ lists them)`,
		`SiBadArgument (187): "CPU/cpu0/" is a context, not a statistic`,
		"2 of 4 paths name no statistic",
	} {
		if !strings.Contains(stderr, want) {
			t.Fatalf("stderr lacks %q:\n%s", want, stderr)
		}
	}

	out, stderr, code = e.run(append([]string{"get", "--interval", "300ms", "--count", "2", "Disk/sdz/busy", "Proc/pswitch"}, e.args()...)...)
	rows := strings.Split(strings.TrimSpace(out), "\n")
	if code != 1 || len(rows) != 3 || strings.Join(strings.Fields(rows[0]), " ") != "time Proc/pswitch" || !strings.Contains(stderr, `"Disk/sdz/busy"; nearest that exists: Disk/sda/busy`) {
		t.Fatalf("--interval: exit %d\n%s%s", code, out, stderr)
	}
	for _, r := range rows[1:] {
		if f := strings.Fields(r); len(f) != 2 || !strings.HasSuffix(f[1], "/s") {
			t.Fatalf("row %q: want time and a rate\n%s", r, out)
		}
	}
}

// The paths of the README's get examples exist on any Linux host: here on
// the fixture host and on this machine, read directly.
func TestReadmeGetExamplesExistEverywhere(t *testing.T) {
	block := readmeBlock(t, "## Looking at the data")
	e := newEnv(t)
	var lines int
	for _, l := range strings.Split(block, "\n") {
		l, _, _ = strings.Cut(l, "#")
		f := strings.Fields(l)
		if len(f) < 2 || f[0] != "./bin/subagent" || f[1] != "get" {
			continue
		}
		lines++
		var paths []string
		for i := 2; i < len(f); i++ {
			switch {
			case f[i] == "--interval" || f[i] == "--count" || f[i] == "--wait":
				i++ // and its value
			case !strings.HasPrefix(f[i], "-"):
				paths = append(paths, f[i])
			}
		}
		for _, where := range [][]string{e.args(), {"--run-dir", e.runDir, "--state-dir", e.state}} {
			out, stderr, code := e.run(append(append([]string{"get", "--local"}, paths...), where...)...)
			if code != 0 || strings.Count(out, "\n") != len(paths) {
				t.Errorf("README: %s\non %v: exit %d\n%s%s", strings.TrimSpace(l), where, code, out, stderr)
			}
		}
	}
	if lines < 2 {
		t.Fatalf("found %d get examples in the README's block:\n%s", lines, block)
	}
}
