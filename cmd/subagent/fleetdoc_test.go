package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/docexamples"
	"github.com/perfagent/subagent/internal/promtest"
	"github.com/perfagent/subagent/mib/mibtest"
)

// docs/FLEET.md's steps from nothing to a populated Prometheus, as printed,
// for three daemons: /etc/prometheus is a temporary directory,
// /usr/local/bin the tools scripts/install-exporter.sh built, the
// exporter's and Prometheus's addresses the test's, and the test starts
// Prometheus on the configuration where the doc restarts the service.
func TestFleetDocStepsRunAsPrinted(t *testing.T) {
	promtest.Tool(t, "prometheus")
	ex := mibtest.InstallExporter(t)
	const heading = "## From nothing to a dashboard for three hosts"
	etc, tools := t.TempDir(), filepath.Dir(ex.Exporter)
	web := freeTCPAddr(t)
	subst := func(s string) string {
		return strings.NewReplacer("/etc/prometheus", etc, "/usr/local/bin", tools, "127.0.0.1:9116", web).Replace(s)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	sh := func(block string) string {
		t.Helper()
		cmd := exec.Command("bash", "-e", "-c", subst(block))
		cmd.Dir = root
		cmd.Env = mibtest.NetSNMPEnv(t)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", block, err, out)
		}
		return string(out)
	}

	// Step 2: the configuration, checked by promtool.
	if out := sh(docexamples.Get(t, "docs/FLEET.md", heading, 2).Text); !strings.Contains(out, "SUCCESS") {
		t.Errorf("promtool check config says no SUCCESS:\n%s", out)
	}
	// The config names the exporter's documented address; the test's is
	// another.
	cfg := filepath.Join(etc, "prometheus.yml")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(subst(string(b))), 0o644); err != nil {
		t.Fatal(err)
	}

	// Step 3: three hosts.
	var hosts []*fleetHost
	for n := range 3 {
		hosts = append(hosts, startFleetHost(t, n, false))
	}
	targets := docexamples.Get(t, "docs/FLEET.md", heading, 3).Text
	for i, name := range []string{"db1.example.org:161", "db2.example.org:161", "web1.example.org:161"} {
		if !strings.Contains(targets, name) {
			t.Fatalf("the targets block names no %s:\n%s", name, targets)
		}
		targets = strings.ReplaceAll(targets, name, hosts[i].addr)
	}
	if err := os.WriteFile(filepath.Join(etc, "targets", "hosts.yml"), []byte(targets), 0o644); err != nil {
		t.Fatal(err)
	}

	// Step 4: the exporter, as printed (one command line), and Prometheus.
	line := strings.TrimSpace(subst(docexamples.Get(t, "docs/FLEET.md", heading, 4).Text))
	if strings.Contains(line, "\n") {
		t.Fatalf("the exporter block is not one command line:\n%s", line)
	}
	f := strings.Fields(line)
	exporter := exec.Command(f[0], f[1:]...)
	exLog := &testutil.Buffer{}
	exporter.Stdout, exporter.Stderr = exLog, exLog
	exporter.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := exporter.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { exporter.Process.Kill(); exporter.Wait() })
	prom := promtest.Start(t, cfg)

	// Step 5 (block 6; block 5 restarts the service): the check, as printed, until the three are up (the first
	// scrape comes within the 15 s interval).
	check := strings.ReplaceAll(docexamples.Get(t, "docs/FLEET.md", heading, 6).Text, "127.0.0.1:9090", prom.Addr)
	var out string
	testutil.Eventually(t, "the doc's check to count 3 hosts up", time.Minute, func() bool {
		out = sh(check)
		return strings.Contains(out, `"3"]`)
	})
	if t.Failed() {
		t.Logf("last answer: %s\nexporter:\n%s", out, exLog.String())
	}
	// And the rules run on them: memory used of each host.
	testutil.Eventually(t, "memory used of the three hosts", time.Minute, func() bool {
		r, err := prom.Query("instance:subagent_memory_used:bytes")
		return err == nil && len(r) == 3
	})
}
