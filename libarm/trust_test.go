package libarm

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/armring"
	"github.com/perfagent/subagent/internal/testutil"
)

// libarm never connects to arm.sock in a directory another user could
// have made (0777, owned by uid 65534): it logs why to ARM_LOGFILE and
// runs as a no-op. Made trusted, the same directory is used.
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
	c.Env = append(os.Environ(), "SUBAGENT_RUN_DIR="+run, "ARM_LOGFILE="+logf)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { c.Process.Kill(); c.Wait() }()
	const count = "RTime/ARM/ARMsampleprogram/Sample_transaction/count"
	testutil.Eventually(t, "the refusal in ARM_LOGFILE", 5*time.Second, func() bool {
		b, _ := os.ReadFile(logf)
		return strings.Contains(string(b), "directory "+run+" is not trusted: mode 0777")
	})
	time.Sleep(1500 * time.Millisecond) // the library retries every second
	if _, ok := d.value(count); ok {
		t.Fatalf("%s is served: the library registered through an untrusted directory", count)
	}
	if err := os.Chmod(run, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(run, 0, 0); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, count+" once the directory is trusted", 10*time.Second, func() bool {
		_, ok := d.value(count)
		return ok
	})
}
