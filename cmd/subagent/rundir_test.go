package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/client/rundir"
	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/ctest"
)

// runDirNSEnv carries the mount namespace of the outer run of
// TestRunDirCandidatesAllClientsChooseTheSame into the inner one, which
// checks it runs in another.
const runDirNSEnv = "RUNDIR_TEST_OUTER_NS" // not SUBAGENT_*: the daemon refuses unknown ones

// One order of run directories (client/rundir, cshared/rundir.c) for the
// daemon and every client: with a system daemon on /run/subagent and a
// daemon of the user on $XDG_RUNTIME_DIR/subagent, the CLI, the Go
// supplier (ddsclient), the Go ARM program (package arm), libSpmi's
// supplier and consumer halves, a libarm program and the Go consumer of
// that user all choose the user's daemon; with it stopped, the system's;
// with $SUBAGENT_RUN_DIR, that one over both. The test re-runs itself in a
// mount namespace of its own with a tmpfs on /run, so /run/subagent is
// the test's: the host's /run is never written.
func TestRunDirCandidatesAllClientsChooseTheSame(t *testing.T) {
	if outer := os.Getenv(runDirNSEnv); outer != "" {
		runDirMatrix(t, outer)
		return
	}
	if testing.Short() {
		t.Skip("starts four daemons and seven clients in a mount namespace: skipped under -short")
	}
	// A mount namespace of its own (CAP_SYS_ADMIN) with a tmpfs over /run,
	// and clients as another user: root, which it fails (never skips)
	// without.
	testutil.RequireRoot(t)
	before := hostRunDir()
	self, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		t.Fatalf("reading this process's mount namespace: %v", err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	defer cancel()
	inner := exec.CommandContext(ctx, exe, "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1", "-test.timeout=8m")
	inner.Env = append(os.Environ(), runDirNSEnv+"="+self)
	// Unshareflags CLONE_NEWNS also makes every mount in the child's
	// namespace private, so its tmpfs on /run never reaches the host.
	inner.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
	out, err := inner.CombinedOutput()
	t.Logf("inner run in its own mount namespace:\n%s", out)
	var ee *exec.ExitError
	switch {
	case err != nil && !errors.As(err, &ee):
		t.Fatalf("the kernel or environment refused a mount namespace (unshare(CLONE_NEWNS) needs CAP_SYS_ADMIN): %v", err)
	case err != nil:
		t.Fatalf("inner run failed: %v", err)
	case !strings.Contains(string(out), "--- PASS: "+t.Name()):
		t.Fatalf("the inner run did not pass %s", t.Name())
	}
	if after := hostRunDir(); after != before {
		t.Fatalf("the host's %s changed: before %s, after %s", rundir.System, before, after)
	}
	t.Logf("the host's %s: %s before and after", rundir.System, before)
}

// hostRunDir describes /run/subagent as this process sees it: absent, or
// its entries and modification time.
func hostRunDir() string {
	fi, err := os.Lstat(rundir.System)
	if errors.Is(err, fs.ErrNotExist) {
		return "absent"
	} else if err != nil {
		return err.Error()
	}
	ents, _ := os.ReadDir(rundir.System)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return fmt.Sprintf("present, %v, modified %v", names, fi.ModTime())
}

// rdDaemon is one daemon of the matrix.
type rdDaemon struct {
	name, runDir string
	asNobody     bool
	cmd          *exec.Cmd
	log          *testutil.Buffer
	exited       chan struct{}
	err          error
	stopped      bool
}

func (d *rdDaemon) pid() int { return d.cmd.Process.Pid }

func (d *rdDaemon) stop(t *testing.T) {
	if d.stopped {
		return
	}
	d.stopped = true
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(10 * time.Second):
		d.cmd.Process.Kill()
		<-d.exited
		t.Errorf("%s daemon ignored SIGTERM for 10s", d.name)
	}
}

// rdWorld is the matrix's fixture: the binaries, the user's directories
// and environment, the daemons' configuration.
type rdWorld struct {
	t         *testing.T
	e         *env
	tmp       string
	xdg, home string // the user's $XDG_RUNTIME_DIR and home (its files)
	cfg       string // the root daemons' configuration: uid 65534 may read, supply
	programs  map[string]string
}

// nobodyDir makes a directory of uid 65534 with mode inside the test's
// temporary directory.
func (w *rdWorld) nobodyDir(name string, mode os.FileMode) string {
	d := filepath.Join(w.tmp, name)
	if err := os.Mkdir(d, mode); err != nil {
		w.t.Fatal(err)
	}
	if err := os.Chown(d, testutil.Nobody, testutil.Nobody); err != nil {
		w.t.Fatal(err)
	}
	if err := os.Chmod(d, mode); err != nil {
		w.t.Fatal(err)
	}
	return d
}

// procWithFree copies the fixture /proc with MemFree at pct percent of
// MemTotal: each daemon serves its own Mem/Real/%free, which tells a
// consumer's daemon by what it read.
func (w *rdWorld) procWithFree(pct int) string {
	dir := filepath.Join(w.tmp, fmt.Sprintf("proc-%d", pct))
	if _, err := os.Stat(dir); err == nil {
		return dir
	}
	testutil.CopyTree(w.t, w.e.proc, dir)
	p := filepath.Join(dir, "meminfo")
	b, err := os.ReadFile(p)
	if err != nil {
		w.t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^MemTotal:\s+(\d+) kB$`).FindSubmatch(b)
	if m == nil {
		w.t.Fatalf("no MemTotal in %s", p)
	}
	total, _ := strconv.Atoi(string(m[1]))
	b = regexp.MustCompile(`(?m)^MemFree:.*$`).ReplaceAll(b, []byte(fmt.Sprintf("MemFree: %d kB", total*pct/100)))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		w.t.Fatal(err)
	}
	testutil.Traversable(w.t, dir)
	return dir
}

// start runs a daemon without --run-dir: it makes its run directory where
// its user's default (or $SUBAGENT_RUN_DIR in environ) says, which must
// be want.
func (w *rdWorld) start(name string, asNobody bool, environ []string, want string, freePct int) *rdDaemon {
	t := w.t
	t.Helper()
	state := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	argv := []string{"run", "--listen", "none", "--state-dir", state, "--proc-root", w.procWithFree(freePct), "--sys-root", w.e.sys}
	d := &rdDaemon{name: name, runDir: want, asNobody: asNobody, log: &testutil.Buffer{}, exited: make(chan struct{})}
	if asNobody {
		testutil.Traversable(t, state)
		if err := os.Chown(state, testutil.Nobody, testutil.Nobody); err != nil {
			t.Fatal(err)
		}
		d.cmd = testutil.AsNobody(t, w.e.bin, argv...)
	} else {
		d.cmd = exec.Command(w.e.bin, append(argv, "--config", w.cfg)...)
		d.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	}
	d.cmd.Env = environ
	d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.err = d.cmd.Wait(); close(d.exited) }()
	t.Cleanup(func() {
		d.stop(t)
		if t.Failed() {
			t.Logf("%s daemon's log, last lines:\n%s", name, testutil.Tail(d.log.String(), 30))
		}
	})
	testutil.Eventually(t, name+" daemon's control socket", time.Minute, func() bool {
		select {
		case <-d.exited:
			t.Fatalf("%s daemon exited: %v\n%s", name, d.err, d.log)
		default:
		}
		return strings.Contains(d.log.String(), "control socket ready")
	})
	if got := field(t, d.log.String(), "run_dir"); got != want {
		t.Fatalf("%s daemon chose %s, want %s", name, got, want)
	}
	for _, s := range []string{"subagent.sock", "dds.sock", "arm.sock"} {
		if fi, err := os.Lstat(filepath.Join(want, s)); err != nil || fi.Mode()&fs.ModeSocket == 0 {
			t.Fatalf("%s daemon: no socket %s in %s: %v", name, s, want, err)
		}
	}
	return d
}

// run runs argv with stdin as uid 65534 (asNobody) or root with environ,
// bounded in time: stdout and stderr, and the exit code.
func (w *rdWorld) run(stdin string, asNobody bool, environ []string, argv ...string) (string, string, int) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	if asNobody {
		n := testutil.AsNobody(w.t, argv[0], argv[1:]...)
		c = exec.CommandContext(ctx, n.Path, n.Args[1:]...)
	}
	c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	c.Env, c.Stdin = environ, strings.NewReader(stdin)
	var out, errb testutil.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		w.t.Fatalf("%v: %v", argv, err)
	}
	return out.String(), errb.String(), c.ProcessState.ExitCode()
}

// ask runs `subagent <args> --run-dir <d's>` as d's own user, who may
// always read it and trusts its directory.
func (w *rdWorld) ask(d *rdDaemon, args ...string) (string, string, int) {
	w.t.Helper()
	argv := append(append([]string{w.e.bin}, args...), "--run-dir", d.runDir)
	return w.run("", d.asNobody, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + w.home, "SUBAGENT_CONFIG="}, argv...)
}

// serves says whether d serves the statistic path.
func (w *rdWorld) serves(d *rdDaemon, path string) bool {
	out, stderr, code := w.ask(d, "get", path)
	if code == 0 && strings.HasPrefix(out, path+" ") {
		return true
	}
	if !strings.Contains(stderr, "SiNotFound") {
		w.t.Fatalf("get %s from the %s daemon: exit %d, neither a value nor SiNotFound:\n%s%s", path, d.name, code, out, stderr)
	}
	return false
}

// value is path's value in d, "" when d does not serve it.
func (w *rdWorld) value(d *rdDaemon, path string) string {
	if !w.serves(d, path) {
		return ""
	}
	out, _, _ := w.ask(d, "get", path)
	return strings.Fields(out)[1]
}

func runDirMatrix(t *testing.T, outerNS string) {
	testutil.RequireRoot(t)
	if ns, err := os.Readlink("/proc/self/ns/mnt"); err != nil || ns == outerNS {
		t.Fatalf("not in a mount namespace of its own (%s, %v; the outer run's is %s): refusing to mount over /run", ns, err, outerNS)
	}
	if err := unix.Mount("subagent-test-run", "/run", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=16m"); err != nil {
		t.Fatalf("mounting a tmpfs over /run in the test's mount namespace: %v", err)
	}
	if _, err := os.Lstat(rundir.System); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s exists on the test's fresh /run: %v", rundir.System, err)
	}
	w := buildRunDirWorld(t)
	override := filepath.Join(w.tmp, "override", "subagent")
	if err := os.Mkdir(filepath.Dir(override), 0o755); err != nil {
		t.Fatal(err)
	}
	path := "PATH=" + os.Getenv("PATH")
	userEnv := []string{path, "HOME=" + w.home, "TMPDIR=" + w.home, "XDG_RUNTIME_DIR=" + w.xdg, "SUBAGENT_CONFIG="}
	rootEnv := []string{path, "HOME=/root", "SUBAGENT_CONFIG="}

	system := w.start("system", false, rootEnv, rundir.System, 10)
	user := w.start("user", true, userEnv, filepath.Join(w.xdg, "subagent"), 20)
	w.clientsChoose("1, both daemons", userEnv, user, system)
	user.stop(t)
	w.clientsChoose("2, the user's daemon stopped", userEnv, system)
	user = w.start("user (again)", true, userEnv, filepath.Join(w.xdg, "subagent"), 20)
	ovEnv := append([]string{rundir.Env + "=" + override}, rootEnv...)
	over := w.start("override", false, ovEnv, override, 30)
	w.clientsChoose("3, "+rundir.Env+" set", append([]string{rundir.Env + "=" + override}, userEnv...), over, user, system)
}

// buildRunDirWorld builds the daemon, the clients and the directories
// they use, all reachable by uid 65534.
func buildRunDirWorld(t *testing.T) *rdWorld {
	w := &rdWorld{t: t, e: newEnv(t), tmp: t.TempDir(), programs: map[string]string{}}
	testutil.Traversable(t, w.tmp)
	testutil.Traversable(t, filepath.Dir(w.e.bin))
	testutil.Traversable(t, w.e.sys)
	w.xdg = w.nobodyDir("xdg", 0o700)
	w.home = w.nobodyDir("home", 0o700)
	w.cfg = filepath.Join(w.tmp, "root.yaml")
	cfg := fmt.Sprintf("control:\n  mode: \"0666\"\n  allow_uids: [%d]\ndds:\n  group: %d\n  allow_uids: [%d]\n", testutil.Nobody, testutil.Nobody, testutil.Nobody)
	if err := os.WriteFile(w.cfg, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}

	bin := filepath.Join(w.tmp, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	goBuild := func(name, dir, pkg string, env ...string) {
		c := exec.Command("go", "build", "-o", filepath.Join(bin, name), pkg)
		c.Dir, c.Env = dir, append(os.Environ(), env...)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
		w.programs[name] = filepath.Join(bin, name)
	}
	goBuild("spmisupl", "", "../../samples/spmisupl")
	goBuild("armload", "", "../../samples/armload")
	goBuild("consumer", outsideModule(t, "consumer"), ".", "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local")

	lib := ctest.Build(t, "")
	w.programs["SpmiSupl1"] = lib.Sample(t, "SpmiSupl1", false, w.home)
	w.programs["spmi-consumer"] = lib.Program(t, false, "spmi-consumer", []string{"-std=c11", "-O2"}, filepath.Join(lib.Src, "test", "consumer.c"))
	_, load := armPrograms(t)
	w.programs["load"] = load
	for _, p := range w.programs {
		testutil.Traversable(t, filepath.Dir(p))
	}
	return w
}

// outsideModule copies client/testdata/<name>, a module of its own, with
// its replace pointed at the checkout's client module (as client's
// TestOutsideModulesNeedOnlyXSys builds it).
func outsideModule(t *testing.T, name string) string {
	client, _ := filepath.Abs("../../client")
	dir := t.TempDir()
	for _, f := range []string{"go.mod", "go.sum", "main.go"} {
		b, err := os.ReadFile(filepath.Join(client, "testdata", name, f))
		if err != nil {
			t.Fatal(err)
		}
		b = []byte(strings.Replace(string(b), " => ../..", " => "+client, 1))
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// clientsChoose runs the seven clients as uid 65534 with environ and checks
// that each reached chosen and none of the others.
func (w *rdWorld) clientsChoose(phase string, environ []string, chosen *rdDaemon, others ...*rdDaemon) {
	t := w.t
	// Every client is checked and reported; the next phase needs them all.
	defer func() {
		if t.Failed() {
			t.FailNow()
		}
	}()
	t.Logf("phase %s: the clients must choose the %s daemon (%s)", phase, chosen.name, chosen.runDir)
	all := append([]*rdDaemon{chosen}, others...)

	// The CLI: the daemon's own process id.
	out, stderr, code := w.run("", true, environ, w.e.bin, "get", "Agent/pid")
	if m := regexp.MustCompile(`^Agent/pid\s+(\d+)\s`).FindStringSubmatch(out); code != 0 || m == nil || m[1] != strconv.Itoa(chosen.pid()) {
		t.Errorf("phase %s: subagent get Agent/pid: exit %d, want the %s daemon's pid %d:\n%s%s", phase, code, chosen.name, chosen.pid(), out, stderr)
	}

	// libSpmi's consumer half (its test driver): Agent/pid in a statset.
	out, stderr, code = w.run("init\nadd Agent/pid\nreadsum\nexit\n", true, environ, w.programs["spmi-consumer"])
	if want := fmt.Sprintf("ok 1 %d\n", chosen.pid()); code != 0 || !strings.Contains(out, want) {
		t.Errorf("phase %s: libSpmi consumer reading Agent/pid: exit %d, want %q (the %s daemon's pid):\n%s%s", phase, code, want, chosen.name, out, stderr)
	}

	// The Go consumer: the Mem/Real/%free only the chosen daemon serves.
	frees := map[string]*rdDaemon{}
	for _, d := range all {
		v, err := strconv.ParseFloat(w.value(d, "Mem/Real/%free"), 64)
		if err != nil {
			t.Fatalf("phase %s: Mem/Real/%%free of the %s daemon: %v", phase, d.name, err)
		}
		frees[strconv.FormatFloat(v, 'f', 2, 64)] = d
	}
	if len(frees) != len(all) {
		t.Fatalf("phase %s: the daemons do not serve distinct Mem/Real/%%free: %s", phase, freeNames(frees))
	}
	out, stderr, code = w.run("", true, environ, w.programs["consumer"])
	m := regexp.MustCompile(`(?m)^stat Mem/Real/%free = ([0-9.]+)$`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Errorf("phase %s: consumer: exit %d, no Mem/Real/%%free:\n%s%s", phase, code, out, stderr)
	} else if v, _ := strconv.ParseFloat(m[1], 64); frees[strconv.FormatFloat(v, 'f', 2, 64)] != chosen {
		t.Errorf("phase %s: the consumer read Mem/Real/%%free %s, not the %s daemon's (%s)", phase, m[1], chosen.name, freeNames(frees))
	}

	// The suppliers: the Go (ddsclient) and the libSpmi one, registered
	// with the chosen daemon alone.
	sups := map[string][]string{
		"DDS/RunDirGo/Test/gadgets": {w.programs["spmisupl"], "-vendor", "RunDirGo", "-asn", "32473", "-file", filepath.Join(w.home, "spmisupl.shm")},
		"DDS/IBM/Test/gadgets":      {w.programs["SpmiSupl1"]},
	}
	var procs []*exec.Cmd
	for _, argv := range sups {
		procs = append(procs, w.background(environ, argv...))
	}
	for p := range sups {
		var got []string
		testutil.Eventually(t, fmt.Sprintf("phase %s: %s served by a daemon", phase, p), time.Minute, func() bool {
			got = nil
			for _, d := range all {
				if w.serves(d, p) {
					got = append(got, d.name)
				}
			}
			return len(got) > 0
		})
		if len(got) != 1 || got[0] != chosen.name {
			t.Errorf("phase %s: %s is served by the %v daemon(s), want the %s daemon alone", phase, p, got, chosen.name)
		}
	}
	for _, c := range procs {
		c.Process.Kill()
		c.Wait()
	}
	for p := range sups {
		testutil.Eventually(t, fmt.Sprintf("phase %s: %s gone from the %s daemon", phase, p, chosen.name), time.Minute, func() bool { return !w.serves(chosen, p) })
	}

	// The ARM programs: libarm's load and package arm's armload, each one
	// good transaction, counted by the chosen daemon alone.
	arms := map[string][]string{
		"RTime/ARM/LoadTest/LoadTransaction/count":   {w.programs["load"], "1", "1"},
		"RTime/ARM/GoLoadTest/LoadTransaction/count": {w.programs["armload"], "1", "1"},
	}
	before := map[*rdDaemon]map[string]int{}
	for _, d := range all {
		before[d] = map[string]int{}
		for p := range arms {
			before[d][p] = w.count(d, p)
		}
	}
	for _, argv := range arms {
		out, stderr, code := w.run("", true, append([]string{connectWait}, environ...), argv...)
		if code != 0 || (strings.HasSuffix(argv[0], "armload") && !strings.Contains(out, "connected true")) {
			t.Errorf("phase %s: %s: exit %d:\n%s%s", phase, argv[0], code, out, stderr)
		}
	}
	for p := range arms {
		var got []string
		testutil.Eventually(t, fmt.Sprintf("phase %s: %s counted by a daemon", phase, p), time.Minute, func() bool {
			got = nil
			for _, d := range all {
				if n := w.count(d, p); n != before[d][p] {
					got = append(got, fmt.Sprintf("%s %d->%d", d.name, before[d][p], n))
				}
			}
			return len(got) > 0
		})
		want := fmt.Sprintf("%s %d->%d", chosen.name, before[chosen][p], before[chosen][p]+1)
		if len(got) != 1 || got[0] != want {
			t.Errorf("phase %s: %s changed in %v, want in the %s daemon alone (%s)", phase, p, got, chosen.name, want)
		}
	}
}

// count is the counter path in d, 0 when d does not serve it.
func (w *rdWorld) count(d *rdDaemon, path string) int {
	v := w.value(d, path)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		w.t.Fatalf("%s in the %s daemon: %q is no count", path, d.name, v)
	}
	return n
}

// background starts argv as uid 65534 with environ; it dies with the test.
func (w *rdWorld) background(environ []string, argv ...string) *exec.Cmd {
	w.t.Helper()
	c := testutil.AsNobody(w.t, argv[0], argv[1:]...)
	c.Env = environ
	log := &testutil.Buffer{}
	c.Stdout, c.Stderr = log, log
	if err := c.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() {
		c.Process.Kill()
		c.Wait()
		if w.t.Failed() {
			w.t.Logf("%s's output:\n%s", filepath.Base(argv[0]), testutil.Tail(log.String(), 20))
		}
	})
	return c
}

// freeNames lists which daemon serves which Mem/Real/%free.
func freeNames(frees map[string]*rdDaemon) string {
	var s []string
	for v, d := range frees {
		s = append(s, d.name+" "+v)
	}
	return strings.Join(s, ", ")
}
