package libarm

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/perfagent/subagent/internal/csan"
)

// sharedDir holds the C sources libSpmi compiles too (the run directory).
const sharedDir = "../cshared"

// sources are the library's C sources, as the Makefile compiles them.
func sources() []string {
	srcs, _ := filepath.Glob("src/*.c")
	return append(srcs, filepath.Join(sharedDir, "rundir.c"))
}

// CFlags are the flags of the Makefile's libarm target.
var CFlags = []string{"-std=c11", "-O2", "-fPIC", "-pthread", "-Wall", "-Wextra", "-Werror"}

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// built compiles libarm.so, libarm.a and the samples once per test run.
func built(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("cc"); err != nil {
		t.Fatalf("no C compiler (cc): %v; make test-deps installs one", err)
	}
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "libarm-test-")
		if buildErr != nil {
			return
		}
		var objs []string
		for _, s := range sources() {
			o := filepath.Join(buildDir, strings.TrimSuffix(filepath.Base(s), ".c")+".o")
			if buildErr = cc(append(append([]string{}, CFlags...), "-I"+sharedDir, "-c", "-o", o, s)...); buildErr != nil {
				return
			}
			objs = append(objs, o)
		}
		if buildErr = cc(append([]string{"-shared", "-pthread", "-o", filepath.Join(buildDir, "libarm.so")}, objs...)...); buildErr != nil {
			return
		}
		// The Makefile's recipe: only arm.h's names stay global.
		if buildErr = run("sh", append([]string{"../scripts/static-lib.sh", filepath.Join(buildDir, "libarm.a")}, objs...)...); buildErr != nil {
			return
		}
		// The SDK sample as the SDK wrote it (K&R main, sleep without
		// unistd.h) plus its banner: only warnings are relaxed.
		if buildErr = cc("-O2", "-w", "-I.", "-o", filepath.Join(buildDir, "sample"), "../samples/arm/sample.c",
			"-L"+buildDir, "-Wl,-rpath,"+buildDir, "-larm"); buildErr != nil {
			return
		}
		if buildErr = cc("-O2", "-pthread", "-Wall", "-Werror", "-I.", "-o", filepath.Join(buildDir, "load"), "../samples/arm/load.c",
			filepath.Join(buildDir, "libarm.a")); buildErr != nil {
			return
		}
		for _, p := range []string{"corr", "pair"} {
			if buildErr = cc("-O2", "-pthread", "-Wall", "-Werror", "-I.", "-o", filepath.Join(buildDir, p), "../samples/arm/"+p+".c",
				filepath.Join(buildDir, "libarm.a")); buildErr != nil {
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildDir
}

// cc runs the C compiler, under the sanitizers of $SUBAGENT_C_SANITIZE
// (package csan) when make test's sanitizer phase sets it.
func cc(args ...string) error { return run("cc", append(csan.FromEnv(), args...)...) }

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return &buildError{cmd: name + " " + strings.Join(args, " "), out: string(out), err: err}
	}
	return nil
}

type buildError struct {
	cmd, out string
	err      error
}

func (e *buildError) Error() string { return e.cmd + ": " + e.err.Error() + "\n" + e.out }

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}
