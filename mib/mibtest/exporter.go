package mibtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Exporter holds Prometheus's snmp_exporter and its config generator, as
// scripts/install-exporter.sh builds them into bin/tools.
type Exporter struct {
	Generator, Exporter string
}

// InstallExporter runs scripts/install-exporter.sh (quick when the pinned
// version is there) and fails the test with the script's message, which
// says what to install, when it cannot; under -short it skips instead.
func InstallExporter(t testing.TB) Exporter {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: not installing snmp_exporter")
	}
	root := repoRoot(t)
	tools := filepath.Join(root, "bin", "tools")
	// A first build compiles the exporter's dependencies: minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", filepath.Join(root, "scripts", "install-exporter.sh"), tools)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/install-exporter.sh: %v\n%s\nthe Prometheus tests need snmp_exporter and its generator (make test-deps as root installs them)", err, out)
	}
	return Exporter{Generator: filepath.Join(tools, "generator"), Exporter: filepath.Join(tools, "snmp_exporter")}
}

// Generate runs the generator on the MIB directories dirs and the
// generator configuration genYml, failing the test on any MIB parse error,
// and returns the snmp.yml it wrote.
func (e Exporter) Generate(t testing.TB, dirs []string, genYml string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "snmp.yml")
	args := []string{"generate", "-g", genYml, "-o", out}
	for _, d := range dirs {
		args = append(args, "-m", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.Generator, args...)
	cmd.Env = NetSNMPEnv(t)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("generator %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	// It warns of lookups, indexes and overrides it could not resolve but
	// writes the file all the same.
	if strings.Contains(string(b), "level=WARN") {
		t.Fatalf("generator %s warned:\n%s", strings.Join(args, " "), b)
	}
	return out
}

// repoRoot is the directory of the module's go.mod above the working
// directory.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "scripts", "install-exporter.sh")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no scripts/install-exporter.sh above the working directory")
		}
		dir = parent
	}
}
