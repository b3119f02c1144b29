package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
)

// rssKB reads a process's resident set size.
func rssKB(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.Fields(v)[0])
			return n
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// openControlTo starts a daemon whose control socket other users may open,
// with the run directory searchable by them.
func openControlTo(t *testing.T, e *env, readers string) {
	t.Helper()
	if err := os.MkdirAll(e.runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	testutil.Traversable(t, e.runDir)
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(cfg, []byte("control:\n  mode: \"0666\"\n  allow_uids: ["+readers+"]\n"), 0o644)
	e.start("--config", cfg)
}

func (e *env) getOK(t *testing.T, path string) {
	t.Helper()
	out, stderr, code := e.run(append([]string{"get", path}, e.args()...)...)
	if code != 0 || !strings.Contains(out, path) {
		t.Fatalf("get %s: exit %d\n%s%s\ndaemon log:\n%s", path, code, out, stderr, e.daemonLog)
	}
}

// A local user holding hundreds of connections, each sending a huge line,
// neither stops the daemon (it runs with few file descriptors) nor
// bloats it, nor locks root out; the refusals are logged a bounded number
// of times.
func TestControlSocketHoldsAgainstAFlood(t *testing.T) {
	testutil.RequireRoot(t)
	e := newEnv(t)
	e.wrap = []string{"prlimit", "--nofile=128", "--"}
	openControlTo(t, e, strconv.Itoa(testutil.Nobody))
	e.getOK(t, "CPU/cpu0/idle")
	before := rssKB(t, e.daemon.Process.Pid)

	cmd := testutil.AsNobody(t, os.Args[0])
	cmd.Env = append(os.Environ(), testModeEnv+"=flood "+filepath.Join(e.runDir, "subagent.sock")+" 400 0 16")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("flood: %v", err)
	}
	var connected, answered, held int
	fmt.Sscanf(line, "connected %d answered-with-error %d held %d", &connected, &answered, &held)
	if connected != 400 || held != 16 || answered == 0 {
		t.Errorf("flood: %q; want 400 connected, the 16 a user may hold kept, the others refused (most with an answer)", line)
	}
	// While the attacker holds its connections, root still reads.
	e.getOK(t, "CPU/cpu0/idle")
	stdin.Close()
	cmd.Wait()
	e.getOK(t, "Mem/Real/size")
	select {
	case <-e.daemonExited:
		t.Fatalf("daemon exited: %v", e.daemonErr)
	default:
	}
	if after := rssKB(t, e.daemon.Process.Pid); after > before+32<<10 {
		t.Errorf("RSS grew from %d KiB to %d KiB", before, after)
	}
	if n := strings.Count(e.daemonLog.String(), "refused a connection"); n != 1 {
		t.Errorf("refusals logged %d times:\n%s", n, e.daemonLog)
	}
}

// Huge request lines from an allowed user are refused at the bound and
// leave no memory behind.
func TestHugeControlLinesAreRefused(t *testing.T) {
	e := newEnv(t)
	e.start()
	e.getOK(t, "CPU/cpu0/idle")
	before := rssKB(t, e.daemon.Process.Pid)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), testModeEnv+"=flood "+filepath.Join(e.runDir, "subagent.sock")+" 30 16777216 0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("flood: %v", err)
	}
	if !strings.HasPrefix(string(out), "connected 30 answered-with-error 30") {
		t.Errorf("30 connections with 16 MiB lines: %q", out)
	}
	testutil.Eventually(t, "the daemon to answer again", 10*time.Second, func() bool {
		_, _, code := e.run(append([]string{"get", "CPU/cpu0/idle"}, e.args()...)...)
		return code == 0
	})
	if after := rssKB(t, e.daemon.Process.Pid); after > before+32<<10 {
		t.Errorf("RSS grew from %d KiB to %d KiB", before, after)
	}
}

// A user allowed to read cannot make the daemon measure a host (a read
// creates nothing) nor delete an operator's host.
func TestReadersCannotSteer(t *testing.T) {
	testutil.RequireRoot(t)
	e := newEnv(t)
	openControlTo(t, e, strconv.Itoa(testutil.Nobody))
	if _, stderr, code := e.run(append([]string{"create", "RTime/LAN/127.0.0.7"}, e.args()...)...); code != 0 {
		t.Fatalf("root's create: %s", stderr)
	}
	asNobody := func(args ...string) (string, int) {
		return runAsNobody(t, append(os.Environ(), "SUBAGENT_CONFIG="), e.bin, append(args, "--run-dir", e.runDir, "--state-dir", e.state)...)
	}
	testutil.Traversable(t, filepath.Dir(e.bin))
	if out, code := asNobody("get", "RTime/LAN/127.0.0.8/requests"); code == 0 || !strings.Contains(out, "SiNotFound") {
		t.Errorf("reader's get of an unknown host: exit %d\n%s", code, out)
	}
	if out, code := asNobody("create", "RTime/LAN/127.0.0.8"); code == 0 || !strings.Contains(out, "uid 65534 may not create") {
		t.Errorf("reader's create: exit %d\n%s", code, out)
	}
	if out, code := asNobody("delete", "RTime/LAN/127.0.0.7"); code == 0 || !strings.Contains(out, "uid 65534 may not delete") {
		t.Errorf("reader's delete: exit %d\n%s", code, out)
	}
	out, _, _ := e.run(append([]string{"peek", "RTime/LAN/"}, e.args()...)...)
	if !strings.Contains(out, "127.0.0.7") || strings.Contains(out, "127.0.0.8") {
		t.Errorf("after the reader's tries, RTime/LAN holds:\n%s", out)
	}
	if log := e.daemonLog.String(); !strings.Contains(log, "op=create path=RTime/LAN/127.0.0.7 uid=0") || !strings.Contains(log, "control: change refused") {
		t.Errorf("changes and refusals not logged with who asked:\n%s", log)
	}
}
