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

// A supplier and a consumer in other modules (testdata/supplier: one DDS
// statistic, one ARM transaction; testdata/consumer: the program of
// docs/CONSUMERS.md) build against this module alone, and their module
// graphs hold golang.org/x/sys and nothing else: none of the daemon's
// dependencies (viper, cobra, gosnmp, procfs, ...) comes along.
func TestOutsideModulesNeedOnlyXSys(t *testing.T) {
	for _, name := range []string{"supplier", "consumer"} {
		t.Run(name, func(t *testing.T) { outsideModule(t, name) })
	}
}

func outsideModule(t *testing.T, fixture string) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the fixture: %v", err)
	}
	self, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, file := range []string{"go.mod", "go.sum", "main.go"} {
		b, err := os.ReadFile(filepath.Join("testdata", fixture, file))
		if err != nil {
			t.Fatal(err)
		}
		if file == "go.mod" {
			old := modPath + " => ../.."
			if !strings.Contains(string(b), old) {
				t.Fatalf("testdata/%s/go.mod has no %q", fixture, old)
			}
			b = []byte(strings.Replace(string(b), old, modPath+" => "+self, 1))
		}
		if err := os.WriteFile(filepath.Join(dir, file), b, 0o644); err != nil {
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
	run("build", "-o", filepath.Join(dir, fixture), ".")

	var mods []string
	for _, line := range strings.Split(strings.TrimSpace(run("list", "-m", "all")), "\n") {
		mods = append(mods, strings.Fields(line)[0])
	}
	for _, daemonDep := range []string{"github.com/spf13/viper", "github.com/spf13/cobra", "github.com/gosnmp/gosnmp", "github.com/prometheus/procfs"} {
		if slices.Contains(mods, daemonDep) {
			t.Errorf("the %s's module graph holds %s, a dependency of the daemon", fixture, daemonDep)
		}
	}
	if want := []string{"example.com/" + fixture, modPath, "golang.org/x/sys"}; !slices.Equal(mods, want) {
		t.Errorf("the %s's module graph is %q, want %q", fixture, mods, want)
	}

	// What the program links: the standard library, this module, x/sys.
	for _, p := range strings.Fields(run("list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".")) {
		if p != "example.com/"+fixture && !strings.HasPrefix(p, modPath+"/") && !strings.HasPrefix(p, "golang.org/x/sys/") {
			t.Errorf("the %s links %s", fixture, p)
		}
	}
}
