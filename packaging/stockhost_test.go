package packaging

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
)

// The README's first day on a stock Debian 12 root (scripts/stock-host.sh,
// quick mode): `make run &`, then its blocks as printed, the MIB ones with
// no "Cannot find module". `make test` inside that root too is `make
// stock-host` (CI, after `make test`), which would double `make test`'s
// time here. The script needs root and Debian's mirror, as `make
// test-deps` does; without root the test fails (CI runs as root).
func TestREADMEOnAStockDebianRoot(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Debian root with debootstrap (minutes): skipped under -short")
	}
	t.Parallel() // minutes of download and build, beside the package's other tests
	if os.Geteuid() != 0 {
		t.Fatal("scripts/stock-host.sh needs root (debootstrap, chroot, namespaces); run it as root (CI does)")
	}
	if _, err := exec.LookPath("debootstrap"); err != nil {
		t.Fatal("no debootstrap: make test-deps installs it (scripts/install-test-deps.sh)")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(repo, "scripts", "stock-host.sh"), dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	if err != nil {
		run, _ := os.ReadFile(filepath.Join(dir, "out", "make-run.log"))
		t.Fatalf("scripts/stock-host.sh: %v\n%s\nmake run:\n%s", err, out, testutil.Tail(string(run), 30))
	}
	t.Logf("%s", out)
}
