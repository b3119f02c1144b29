// Package ctest builds libSpmi (libspmi/) and C programs linked with it,
// using the system C compiler, for the tests of libspmi and cmd/subagent.
// Every test builds its own copy in a temporary directory, so tests need
// no bin/ and packages tested in parallel do not race on one; the flags
// are the Makefile's (target libspmi).
package ctest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/perfagent/subagent/internal/csan"
)

// CFlags are the Makefile's LIBSPMI_CFLAGS, without the include path.
var CFlags = []string{"-std=c11", "-O2", "-fPIC", "-pthread", "-Wall", "-Wextra", "-Werror"}

// Lib is a built copy of the library.
type Lib struct {
	San     []string // csan.Flags the library and its programs are built with
	CC      string
	Dir     string // holds libSpmi.so and libSpmi.a
	Include string // libspmi/include, for spmi_dds.h and sys/Spmidef.h
	Src     string // libspmi: C sources in src/, test programs in test/
	Samples string // samples/spmi: the guide's C programs
}

// Compiler is $CC or cc; a test that needs it fails without it, since
// the C library is only proven by compiling it (make test-deps installs
// gcc).
func Compiler(t testing.TB) string {
	t.Helper()
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	p, err := exec.LookPath(cc)
	if err != nil {
		t.Fatalf("no C compiler (%s): install gcc, e.g. with make test-deps", cc)
	}
	return p
}

func run(t testing.TB, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// Halves are the folders of the library's C sources under src/, from
// the bottom up: the shared part (src/ itself), then the supplier and the
// consumer halves, which build on it and never on each other.
var Halves = []string{".", "supplier", "consumer"}

// Sources are the library's C sources below root (the libspmi folder),
// in the order of Halves; object names are their base names, so no two
// share one.
func Sources(root string) []string {
	var cs []string
	for _, h := range Halves {
		m, _ := filepath.Glob(filepath.Join(root, "src", h, "*.c"))
		cs = append(cs, m...)
	}
	return cs
}

// Build compiles the library into dir, or into a temporary directory of
// t when dir is "", under the sanitizers of $SUBAGENT_C_SANITIZE (package
// csan).
func Build(t testing.TB, dir string) *Lib {
	t.Helper()
	return BuildSan(t, dir, os.Getenv(csan.Env))
}

// BuildSan is Build under the sanitizers san ("address,undefined",
// "thread"; "" none).
func BuildSan(t testing.TB, dir, san string) *Lib {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	_, file, _, _ := runtime.Caller(0) // internal/ctest/ctest.go
	src := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(file))), "libspmi")
	l := &Lib{San: csan.Flags(san), CC: Compiler(t), Dir: dir, Src: src, Include: filepath.Join(src, "include"), Samples: filepath.Join(src, "..", "samples", "spmi")}
	cs := Sources(src)
	if len(cs) == 0 {
		t.Fatalf("no C sources in %s", src)
	}
	// The sources libarm compiles too (the run directory), as the Makefile.
	shared := filepath.Join(filepath.Dir(src), "cshared")
	cs = append(cs, filepath.Join(shared, "rundir.c"))
	var objs []string
	for _, c := range cs {
		o := filepath.Join(l.Dir, strings.TrimSuffix(filepath.Base(c), ".c")+".o")
		run(t, l.Dir, l.CC, append(append(append([]string{}, CFlags...), l.San...), "-I"+l.Include, "-I"+shared, "-c", "-o", o, c)...)
		objs = append(objs, o)
	}
	run(t, l.Dir, l.CC, append(append([]string{"-shared", "-pthread", "-o", filepath.Join(l.Dir, "libSpmi.so")}, l.San...), objs...)...)
	// The Makefile's recipe: only the documented names stay global.
	staticLib := filepath.Join(filepath.Dir(src), "scripts", "static-lib.sh")
	run(t, l.Dir, "sh", append([]string{staticLib, filepath.Join(l.Dir, "libSpmi.a")}, objs...)...)
	return l
}

// Program compiles the C sources srcs into an executable linked with the
// shared library (found through its run path) or the static one, and
// returns its path, name in the library's directory. extra flags go
// before the sources.
func (l *Lib) Program(t testing.TB, static bool, name string, extra []string, srcs ...string) string {
	t.Helper()
	out := filepath.Join(l.Dir, name)
	args := append(append([]string{"-Wall", "-Werror", "-pthread", "-I" + l.Include, "-o", out}, extra...), l.San...)
	args = append(args, srcs...)
	if static {
		args = append(args, filepath.Join(l.Dir, "libSpmi.a"))
	} else {
		args = append(args, "-L"+l.Dir, "-Wl,-rpath,"+l.Dir, "-lSpmi")
	}
	run(t, "", l.CC, args...)
	return out
}

// Internal compiles a test program that calls the library's internal
// functions, which are local in libSpmi.a: it links the objects.
func (l *Lib) Internal(t testing.TB, name string, extra []string, srcs ...string) string {
	t.Helper()
	objs, _ := filepath.Glob(filepath.Join(l.Dir, "*.o"))
	out := filepath.Join(l.Dir, name)
	args := append(append([]string{"-Wall", "-Werror", "-pthread", "-I" + l.Include, "-o", out}, extra...), l.San...)
	run(t, "", l.CC, append(append(args, srcs...), objs...)...)
	return out
}

// Sample builds samples/spmi/<name>.c and returns the program. The
// guide's samples keep their /etc/... shared file names; with a non-empty
// fileDir the source is first copied with "/etc/" replaced by fileDir, so
// that a test writes no system file and tests do not share one.
func (l *Lib) Sample(t testing.TB, name string, static bool, fileDir string) string {
	t.Helper()
	src := filepath.Join(l.Samples, name+".c")
	if fileDir != "" {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		src = filepath.Join(fileDir, name+".c")
		if err := os.WriteFile(src, []byte(strings.ReplaceAll(string(b), `"/etc/`, `"`+fileDir+`/`)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The guide's SpmiSupl1.c keeps its void main.
	return l.Program(t, static, fmt.Sprintf("%s-%s-static=%v", name, filepath.Base(fileDir), static), []string{"-Wno-main"}, src)
}
