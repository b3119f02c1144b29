package testutil

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// Exported lists the global names lib defines: nm -g --defined-only of an
// archive, nm -D --defined-only of a shared library.
func Exported(t testing.TB, lib string) map[string]bool {
	t.Helper()
	args := []string{"-g", "--defined-only", lib}
	if strings.Contains(lib, ".so") {
		args[0] = "-D"
	}
	out, err := exec.Command("nm", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("nm %s: %v\n%s", lib, err, out)
	}
	names := map[string]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) == 3 {
			names[f[2]] = true
		}
	}
	return names
}

// Declared lists the names matching word that the C headers declare as
// functions (name followed by "(") or extern objects.
func Declared(t testing.TB, word string, headers ...string) map[string]bool {
	t.Helper()
	fn := regexp.MustCompile(`\b(` + word + `)\s*\(`)
	obj := regexp.MustCompile(`(?m)^\s*extern\s[^(;]*?\b(` + word + `)\s*(\[\s*\])?\s*;`)
	names := map[string]bool{}
	for _, h := range headers {
		b, err := os.ReadFile(h)
		if err != nil {
			t.Fatal(err)
		}
		for _, re := range []*regexp.Regexp{fn, obj} {
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				names[m[1]] = true
			}
		}
	}
	return names
}

// CheckExports fails t unless lib defines exactly the declared names.
func CheckExports(t testing.TB, lib string, declared map[string]bool) {
	t.Helper()
	got := Exported(t, lib)
	for n := range got {
		if !declared[n] {
			t.Errorf("%s exports %s, which no public header declares", lib, n)
		}
	}
	for n := range declared {
		if !got[n] {
			t.Errorf("%s does not define %s, which its headers declare", lib, n)
		}
	}
}
