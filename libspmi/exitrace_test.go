//go:build linux

package libspmi

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/csan"
	"github.com/perfagent/subagent/internal/ctest"
)

// exitCycles is how many registrations test/exitrace.c ends from a signal
// handler (its CYCLES bounds it).
const exitCycles = 12

// SpmiExit from a signal handler (as the guide's samples call it) while
// threads run batches and store values, on another thread and inside a
// batch of the handler's own thread: nothing touches unmapped memory, no
// call deadlocks, every exit unregisters and removes the file, and what
// the exits retired is unmapped by the next SpmiDdsInit with no batch
// open. Under AddressSanitizer with UBSan, and under ThreadSanitizer.
func TestBatchesSurviveExitFromSignalHandler(t *testing.T) {
	// Subtests are named without the comma, which would split -Wl,-rpath.
	for name, san := range map[string]string{"asan+ubsan": "address,undefined", "tsan": "thread"} {
		t.Run(name, func(t *testing.T) {
			prefix := sanitizerRuns(t, san)
			l := ctest.BuildSan(t, "", san)
			bin := l.Program(t, false, "exitrace", []string{"-std=c11", "-O1"}, filepath.Join(l.Src, "test", "exitrace.c"))
			d := startDaemon(t, "")
			cmd := exec.Command(prefix[0], append(prefix[1:], bin, filepath.Join(t.TempDir(), "race_hook"), strconv.Itoa(exitCycles))...)
			cmd.Env = append(os.Environ(), "SUBAGENT_DDS_SOCKET=", "SUBAGENT_RUN_DIR="+d.RunDir,
				"TSAN_OPTIONS=halt_on_error=1")
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.HasPrefix(string(out), fmt.Sprintf("ok %d ", exitCycles)) {
				t.Fatalf("exitrace under %s: %v\n%s", san, err, out)
			}
			t.Logf("%s: %s", san, strings.TrimSpace(string(out)))
			testutil.Eventually(t, "no supplier left registered", 5*time.Second, func() bool {
				return d.S.Stats().Suppliers == 0
			})
		})
	}
}

// sanitizerRuns returns the command a program built with sanitizers san
// runs under: itself (after "env", which adds nothing), or with
// address-space randomisation off (setarch -R) where ThreadSanitizer
// cannot map its shadow on this kernel (vm.mmap_rnd_bits above 28). It
// skips, saying why, when the compiler has no runtime for san.
func sanitizerRuns(t *testing.T, san string) []string {
	t.Helper()
	cc := ctest.Compiler(t)
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "probe.c"), filepath.Join(dir, "probe")
	if err := os.WriteFile(src, []byte("#include <pthread.h>\nstatic void *f(void *a) { return a; }\n"+
		"int main(void) { pthread_t t; pthread_create(&t, 0, f, 0); return pthread_join(t, 0); }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cc, append(csan.Flags(san), "-pthread", "-o", bin, src)...).CombinedOutput(); err != nil {
		t.Skipf("%s has no -fsanitize=%s runtime (Debian's gcc brings libasan, libubsan and libtsan; make test-deps installs gcc): %v\n%s",
			cc, san, err, out)
	}
	if exec.Command(bin).Run() == nil {
		return []string{"env"}
	}
	if exec.Command("setarch", "-R", bin).Run() == nil {
		t.Logf("-fsanitize=%s programs run with address-space randomisation off (setarch -R) on this kernel", san)
		return []string{"setarch", "-R"}
	}
	out, _ := exec.Command(bin).CombinedOutput()
	t.Fatalf("a -fsanitize=%s program does not run here, even under setarch -R:\n%s", san, out)
	return nil
}
