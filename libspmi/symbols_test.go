package libspmi

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/perfagent/subagent/client/testutil"
)

// libSpmi.a and libSpmi.so define the names of spmi_dds.h and
// sys/Spmidef.h and nothing else, so that a program with its own
// json_parse or dds_connect links with either.
func TestLibrariesExportOnlyTheGuidesNames(t *testing.T) {
	// The Makefile's build: a sanitizer's own names (ASan's __odr_asan.*)
	// are not the library's.
	l := plainLibrary(t)
	declared := testutil.Declared(t, `Spmi\w+`, filepath.Join(l.Include, "spmi_dds.h"), filepath.Join(l.Include, "sys", "Spmidef.h"))
	if len(declared) < 30 {
		t.Fatalf("only %d names found in the headers: %v", len(declared), declared)
	}
	for _, lib := range []string{"libSpmi.a", "libSpmi.so"} {
		testutil.CheckExports(t, filepath.Join(l.Dir, lib), declared)
	}
	src := filepath.Join(t.TempDir(), "own.c")
	if err := os.WriteFile(src, []byte(`#include <sys/Spmidef.h>
int json_parse(const char *s) { return s[0]; }
int dds_connect(void) { return 7; }
int cons_call(void) { return 1; }
int main(void) {
	SpmiErrno = 0;
	return json_parse("") + dds_connect() - 7 + cons_call() - 1 + SpmiErrno;
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, static := range []bool{true, false} {
		prog := l.Program(t, static, "own", nil, src)
		if out, err := exec.Command(prog).CombinedOutput(); err != nil {
			t.Errorf("a program with its own json_parse, linked static=%v: %v\n%s", static, err, out)
		}
	}
}
