package libarm

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/perfagent/subagent/client/testutil"
)

// libarm.a and libarm.so define arm.h's six calls and nothing else, so
// that a program with its own ar_log links with either.
func TestLibrariesExportOnlyArmH(t *testing.T) {
	dir := built(t)
	declared := testutil.Declared(t, `arm_\w+`, "arm.h")
	if len(declared) != 6 {
		t.Fatalf("arm.h declares %v, want the six ARM 2.0 calls", declared)
	}
	for _, lib := range []string{"libarm.a", "libarm.so"} {
		testutil.CheckExports(t, filepath.Join(dir, lib), declared)
	}
	src := filepath.Join(t.TempDir(), "own.c")
	if err := os.WriteFile(src, []byte(`#include "arm.h"
int ar_log(void) { return 1; }
int ar_setup(void) { return 2; }
int main(void) { return ar_log() + ar_setup() - 3 + (arm_end(-1, 0, 0, 0) > 0); }
`), 0o644); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(t.TempDir(), "own")
	if err := cc("-Wall", "-Werror", "-pthread", "-I.", "-o", prog, src, filepath.Join(dir, "libarm.a")); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(prog).CombinedOutput(); err != nil {
		t.Errorf("a program with its own ar_log, linked with libarm.a: %v\n%s", err, out)
	}
}
