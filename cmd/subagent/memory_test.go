package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/internal/testutil"
)

// Memory goes back to the system after suppliers leave: 100,000 DDS
// statistics raise the daemon's resident set, and within a minute of the
// suppliers leaving it is back within 1.5 times its idle size.
func TestMemoryReturnsAfterSuppliersLeave(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and loads 100,000 statistics")
	}
	dir := t.TempDir()
	load := filepath.Join(dir, "ddsload")
	if out, err := exec.Command("go", "build", "-o", load, "../../dds/samples/ddsload").CombinedOutput(); err != nil {
		t.Fatalf("go build ddsload: %v\n%s", err, out)
	}
	e := newEnv(t)
	cfg := filepath.Join(dir, "c.yaml")
	// The background refresh, which drops the suppliers' tree, every 2 s
	// rather than 30 s: the test's bound is 20 s, the target a minute.
	os.WriteFile(cfg, []byte("refresh:\n  interval: 2s\n"), 0o644)
	e.start("--config", cfg)
	read := func(path string) {
		t.Helper()
		out, stderr, code := e.run(append([]string{"get", path}, e.args()...)...)
		if code != 0 || !strings.HasPrefix(out, path) {
			t.Fatalf("get %s: exit %d %s%s", path, code, out, stderr)
		}
	}
	read("CPU/cpu0/idle")
	time.Sleep(3 * time.Second) // a few background refreshes settle the heap
	idle := rssKB(t, e.daemon.Process.Pid)

	cmd := exec.Command(load, "-suppliers", "100", "-stats", "1000", "-dir", dir)
	cmd.Env = append(os.Environ(), "SUBAGENT_RUN_DIR="+e.runDir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.Contains(line, "registered") {
		t.Fatalf("ddsload: %q %v", line, err)
	}
	read("DDS/Load/s100/v1000")
	read("DDS/Load/s1/v1")
	loaded := rssKB(t, e.daemon.Process.Pid)
	if loaded < idle+50<<10 {
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
