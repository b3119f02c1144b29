package libarm

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/armring"
	"github.com/perfagent/subagent/client/testutil"
)

// libarm never connects to arm.sock in a directory another user could
// have made (0777, owned by uid 65534; then a symbolic link): it logs
// why to ARM_LOGFILE, once per reason, and runs as a no-op. Made
// trusted, the same directory is used.
func TestUntrustedRunDirRefused(t *testing.T) {
	dir := built(t)
	testutil.RequireRoot(t)
	run := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(run, 0o700); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, run, armring.Geometry{Slots: 64, Apps: 4, Trans: 8})
	if err := os.Chown(run, testutil.Nobody, testutil.Nobody); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(run, 0o777); err != nil {
		t.Fatal(err)
	}
	logf := filepath.Join(t.TempDir(), "logfile")
	c := exec.Command(filepath.Join(dir, "sample"))
	c.Env = append(os.Environ(), "SUBAGENT_RUN_DIR="+run, "ARM_LOGFILE="+logf, "ARM_RETRY=0.02")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { c.Process.Kill(); c.Wait() }()
	logged := func(what, reason string) {
		t.Helper()
		testutil.Eventually(t, what+" in ARM_LOGFILE", time.Minute, func() bool {
			b, _ := os.ReadFile(logf)
			return strings.Contains(string(b), "directory "+run+" is not trusted: "+reason)
		})
	}
	logged("the refusal", "mode 0777")
	// Another untrusted directory at the same path, a symbolic link to
	// this one: its reason in the log is a retry that did not connect
	// either (each attempt ends before the next begins).
	real := run + ".real"
	if err := os.Rename(run, real); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, run); err != nil {
		t.Fatal(err)
	}
	logged("a retry's refusal", "it is a symbolic link")
	if v, _ := d.value("RTime/ARM/procs"); v.Uint64() != 0 {
		t.Fatalf("RTime/ARM/procs = %v: the library registered through an untrusted directory", v)
	}
	if b, _ := os.ReadFile(logf); strings.Contains(string(b), "arm: connected") {
		t.Fatalf("the library connected through an untrusted directory:\n%s", b)
	}
	if err := os.Remove(run); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(real, run); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(run, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(run, 0, 0); err != nil {
		t.Fatal(err)
	}
	const count = "RTime/ARM/ARMsampleprogram/Sample_transaction/count"
	testutil.Eventually(t, count+" once the directory is trusted", time.Minute, func() bool {
		_, ok := d.value(count)
		return ok
	})
}
