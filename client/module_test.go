package client

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const modPath = "github.com/perfagent/subagent/client"

// A supplier in another module (testdata/supplier: one DDS statistic, one
// ARM transaction) builds against this module alone, and its module graph
// holds golang.org/x/sys and nothing else: none of the daemon's
// dependencies (viper, cobra, gosnmp, procfs, ...) comes along.
func TestSupplierModuleNeedsOnlyXSys(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the fixture: %v", err)
	}
	self, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"go.mod", "go.sum", "main.go"} {
		b, err := os.ReadFile(filepath.Join("testdata", "supplier", name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "go.mod" {
			old := modPath + " => ../.."
			if !strings.Contains(string(b), old) {
				t.Fatalf("testdata/supplier/go.mod has no %q", old)
			}
			b = []byte(strings.Replace(string(b), old, modPath+" => "+self, 1))
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(goBin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local")
		out, err := cmd.Output()
		if err != nil {
			stderr := ""
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("go %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
		}
		return string(out)
	}
	run("build", "-o", filepath.Join(dir, "supplier"), ".")

	var mods []string
	for _, line := range strings.Split(strings.TrimSpace(run("list", "-m", "all")), "\n") {
		mods = append(mods, strings.Fields(line)[0])
	}
	for _, daemonDep := range []string{"github.com/spf13/viper", "github.com/spf13/cobra", "github.com/gosnmp/gosnmp", "github.com/prometheus/procfs"} {
		if slices.Contains(mods, daemonDep) {
			t.Errorf("the supplier's module graph holds %s, a dependency of the daemon", daemonDep)
		}
	}
	if want := []string{"example.com/supplier", modPath, "golang.org/x/sys"}; !slices.Equal(mods, want) {
		t.Errorf("the supplier's module graph is %q, want %q", mods, want)
	}

	// What the program links: the standard library, this module, x/sys.
	for _, p := range strings.Fields(run("list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".")) {
		if p != "example.com/supplier" && !strings.HasPrefix(p, modPath+"/") && !strings.HasPrefix(p, "golang.org/x/sys/") {
			t.Errorf("the supplier links %s", p)
		}
	}
}
