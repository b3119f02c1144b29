package main

import (
	"bufio"
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
)

// ddsload builds samples/ddsload, starts it against the daemon with
// args and returns once its suppliers are registered; it is killed when
// the test ends (or dies with it).
func (e *env) ddsload(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	dir := t.TempDir()
	load := filepath.Join(dir, "ddsload")
	if out, err := exec.Command("go", "build", "-o", load, "../../samples/ddsload").CombinedOutput(); err != nil {
		t.Fatalf("go build ddsload: %v\n%s", err, out)
	}
	cmd := exec.Command(load, append(args, "-dir", dir)...)
	cmd.Env = append(os.Environ(), "SUBAGENT_RUN_DIR="+e.runDir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || !strings.Contains(line, "registered") {
		t.Fatalf("ddsload: %q %v", line, err)
	}
	return cmd
}

// Memory goes back to the system after suppliers leave: 100,000 DDS
// statistics, walked whole while their suppliers write, raise the
// daemon's resident set, though not to 60 MB, and within a minute of the
// suppliers leaving it is back within 1.5 times its idle size.
func TestMemoryReturnsAfterSuppliersLeave(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and loads 100,000 statistics")
	}
	dir := t.TempDir()
	e := newEnv(t)
	cfg := filepath.Join(dir, "c.yaml")
	// The background refresh, which drops the suppliers' tree, every 2 s
	// rather than 30 s: the test's bound is 20 s, the target a minute.
	os.WriteFile(cfg, []byte("refresh:\n  interval: 2s\n"), 0o644)
	addr := fmt.Sprintf("127.0.0.1:%d", snmpdtest.FreeUDPPort(t))
	e.start("--config", cfg, "--listen", addr, "--community", "perf")
	read := func(path string) {
		t.Helper()
		out, stderr, code := e.run(append([]string{"get", path}, e.args()...)...)
		if code != 0 || !strings.HasPrefix(out, path) {
			t.Fatalf("get %s: exit %d %s%s", path, code, out, stderr)
		}
	}
	read("CPU/cpu0/idle")
	// Two background refreshes settle the heap.
	refreshes := func() int {
		out, _, _ := e.run(append([]string{"get", "Agent/refreshes"}, e.args()...)...)
		f := strings.Fields(out)
		n, err := strconv.Atoi(f[min(1, len(f)-1)])
		if len(f) < 2 || err != nil {
			t.Fatalf("get Agent/refreshes: %q", out)
		}
		return n
	}
	settled := refreshes() + 2
	testutil.Eventually(t, "two background refreshes", 20*time.Second, func() bool { return refreshes() >= settled })
	idle := rssKB(t, e.daemon.Process.Pid)

	cmd := e.ddsload(t, "-suppliers", "100", "-stats", "1000")
	read("DDS/Load/s100/v1000")
	read("DDS/Load/s1/v1")
	// Every supplier writes its values in one batch a second: a walk that
	// meets a batch open still finds every value.
	walk, err := snmpdtest.Target(t, addr, "perf").BulkWalk(base+".99", 50)
	if err != nil || len(walk) != 100000 {
		t.Fatalf("walk of DDS/ returned %d values, want 100000 (%v)", len(walk), err)
	}
	loaded := rssKB(t, e.daemon.Process.Pid)
	if loaded > 60<<10 {
		t.Errorf("RSS %d KiB with 100,000 statistics walked, want under 60 MB", loaded)
	}
	// The load must raise the resident set well past the 1.5 times idle
	// it is waited to come back to. (Added as blocks, without a node
	// each, 100,000 statistics raise it by ~27 MiB from ~13 MiB idle.)
	if loaded < idle*3/2+8<<10 {
		t.Fatalf("RSS %d KiB with 100,000 statistics, %d KiB idle: the load did not take", loaded, idle)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	var now int
	defer func() {
		if t.Failed() {
			t.Logf("RSS idle %d KiB, loaded %d KiB, last %d KiB", idle, loaded, now)
		}
	}()
	testutil.Eventually(t, "the daemon's RSS to come back within 1.5x idle", 20*time.Second, func() bool {
		now = rssKB(t, e.daemon.Process.Pid)
		return now*2 <= idle*3
	})
	t.Logf("RSS idle %d KiB, with 100,000 statistics %d KiB, after they left %d KiB", idle, loaded, now)
}
