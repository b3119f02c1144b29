package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
)

// plantOpenDir makes dir as another user would to take it over: owned by
// uid 65534 and writable by everyone.
func plantOpenDir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, testutil.Nobody, testutil.Nobody); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
}

// The daemon refuses run and state directories another user made (0777,
// owned by 65534), naming the directory and the fix, and creates nothing
// in them.
func TestDaemonRefusesUntrustedDirs(t *testing.T) {
	testutil.RequireRoot(t)
	e := newEnv(t)
	plantOpenDir(t, e.runDir)
	plantOpenDir(t, e.state)
	_, stderr, code := e.run(append([]string{"run"}, e.args("--listen", "none")...)...)
	for _, want := range []string{"run directory", e.runDir, "owned by uid 65534", "mode 0777", "chown 0 " + e.runDir, "chmod go-w", "--run-dir"} {
		if code == 0 || !strings.Contains(stderr, want) {
			t.Fatalf("exit %d, stderr does not mention %q:\n%s", code, want, stderr)
		}
	}
	if err := os.Chown(e.runDir, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(e.runDir, 0o750); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = e.run(append([]string{"run"}, e.args("--listen", "none")...)...)
	for _, want := range []string{"state directory", e.state, "owned by uid 65534", "--state-dir"} {
		if code == 0 || !strings.Contains(stderr, want) {
			t.Fatalf("exit %d, stderr does not mention %q:\n%s", code, want, stderr)
		}
	}
	for _, d := range []string{e.runDir, e.state} {
		if ents, _ := os.ReadDir(d); len(ents) != 0 {
			t.Fatalf("the refused daemon created %v in %s", ents, d)
		}
	}
}

// A non-root daemon with neither XDG_RUNTIME_DIR nor HOME never uses the
// old fallbacks $TMPDIR/subagent-<uid> and $TMPDIR/subagent-state-<uid>
// (here planted 0777 beforehand): it makes private directories in
// $TMPDIR, says so, and removes them at exit. Clients without a run
// directory refuse to guess. $TMPDIR is the test's own, so that no run
// of the test leaves or meets anything in /tmp.
func TestNonRootDaemonWithoutDirsUsesPrivateOnes(t *testing.T) {
	e := newNobodyEnv(t) // the daemon runs as nobody
	tmp := filepath.Join(t.TempDir(), "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	testutil.Traversable(t, tmp)
	if err := os.Chmod(tmp, 0o1777); err != nil { // like /tmp
		t.Fatal(err)
	}
	planted := []string{filepath.Join(tmp, "subagent-65534"), filepath.Join(tmp, "subagent-state-65534")}
	for _, d := range planted {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "SUBAGENT_CONFIG=", "TMPDIR=" + tmp} // no HOME, no XDG_*

	log := &testutil.Buffer{}
	d := testutil.AsNobody(t, e.bin, "run", "--listen", "none", "--proc-root", e.proc, "--sys-root", e.sys)
	d.Env, d.Stdout, d.Stderr = env, log, log
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	exited := make(chan struct{})
	go func() { waitErr = d.Wait(); close(exited) }()
	defer func() {
		d.Process.Kill()
		<-exited
	}()
	testutil.Eventually(t, "control socket ready", 15*time.Second, func() bool {
		select {
		case <-exited:
			t.Fatalf("daemon exited: %v\n%s", waitErr, log)
		default:
		}
		return strings.Contains(log.String(), "control socket ready")
	})
	out := log.String()
	runDir := field(t, out, "run_dir")
	stateDir := field(t, out, "state_dir")
	for _, want := range []string{"level=WARN", "using a private one", "SUBAGENT_RUN_DIR", "--run-dir", "--state-dir", "lost"} {
		if !strings.Contains(out, want) {
			t.Fatalf("log does not mention %q:\n%s", want, out)
		}
	}
	for _, p := range []struct{ dir, prefix string }{{runDir, "subagent-run-"}, {stateDir, "subagent-state-"}} {
		fi, err := os.Lstat(p.dir)
		if err != nil || filepath.Dir(p.dir) != tmp || !strings.HasPrefix(filepath.Base(p.dir), p.prefix) || !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 ||
			fi.Sys().(*syscall.Stat_t).Uid != testutil.Nobody {
			t.Fatalf("private directory %s: %v %v, want a %s* directory of uid 65534 closed to others", p.dir, fi, err, p.prefix)
		}
	}
	if _, err := os.Stat(filepath.Join(runDir, "subagent.sock")); err != nil {
		t.Fatalf("control socket not in the private run directory: %v", err)
	}
	for _, p := range planted {
		if ents, _ := os.ReadDir(p); len(ents) != 0 {
			t.Fatalf("the daemon used %s: %v", p, ents)
		}
	}

	// Clients: with no run directory of this user's, the system daemon's
	// (client/rundir), never a name in /tmp; SUBAGENT_RUN_DIR works. A
	// daemon the user runs there (make run as root) may serve it or not:
	// either way the client asks it, and only it ("no daemon at", or
	// "cannot ask the daemon at": its socket is closed to nobody). The name
	// deleted names nothing, so that even a daemon that let nobody in
	// would change nothing.
	client := func(extraEnv []string, args ...string) (string, int) {
		return runAsNobody(t, append(slices.Clone(env), extraEnv...), e.bin, args...)
	}
	// When that daemon refuses nobody, the refusal may point to this
	// user's own daemon, as advice only: the client asked no other.
	out, code := client(nil, "delete", "RTime/LAN/nothing.invalid")
	asked := strings.ReplaceAll(out, "set SUBAGENT_RUN_DIR="+runDir, "")
	asked = strings.ReplaceAll(asked, "a daemon of yours serves "+filepath.Join(runDir, "subagent.sock"), "")
	if code == 0 || !strings.Contains(out, "daemon at /run/subagent/subagent.sock") || strings.Contains(asked, tmp) {
		t.Fatalf("delete without a run directory: exit %d\n%s", code, out)
	}
	if out, code := client([]string{"SUBAGENT_RUN_DIR=" + runDir}, "get", "Agent/uptime"); code != 0 || strings.Contains(out, "no daemon") {
		t.Fatalf("get with SUBAGENT_RUN_DIR: exit %d\n%s", code, out)
	}

	d.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("daemon ignored SIGTERM\n%s", log)
	}
	for _, p := range []string{runDir, stateDir} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("private directory %s left after exit: %v", p, err)
		}
	}
}

// field is the value of key=... in the first log line that has it.
func field(t *testing.T, log, key string) string {
	t.Helper()
	m := regexp.MustCompile(`\b` + key + `=(\S+)`).FindStringSubmatch(log)
	if m == nil {
		t.Fatalf("no %s= in the log:\n%s", key, log)
	}
	return m[1]
}
