package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/mib/mibtest"
)

// docBlock returns the n-th fenced block (from 1) under heading in a
// Markdown file of the repository (before the next heading), and its info
// string.
func docBlock(t *testing.T, file, heading string, n int) (lang, text string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", file))
	if err != nil {
		t.Fatal(err)
	}
	under, fence, k := false, false, 0
	var body []string
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case !fence && strings.HasPrefix(l, "#"):
			if under {
				t.Fatalf("%s: no block %d under %q", file, n, heading)
			}
			under = l == heading
		case under && strings.HasPrefix(l, "```"):
			if fence = !fence; fence {
				k, lang, body = k+1, strings.TrimSpace(l[3:]), nil
			} else if k == n {
				return lang, strings.Join(body, "\n") + "\n"
			}
		case fence:
			body = append(body, l)
		}
	}
	t.Fatalf("%s: no block %d under %q", file, n, heading)
	return "", ""
}

// mibEnv is net-snmp's environment for the documentation's commands: the
// snmp.conf of Debian's snmp package ("mibs :") and persistent files of
// the test's own, and, with installed set, net-snmp's default MIB path
// with a directory holding what `make install` puts in
// /usr/share/snmp/mibs in place of that one (tests write no /usr).
func mibEnv(t *testing.T, installed bool) []string {
	t.Helper()
	conf, state := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(state, "cert_indexes"), 0o755)
	if err := os.WriteFile(filepath.Join(conf, "snmp.conf"), []byte("mibs :\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !slices.Contains([]string{"MIBS", "MIBDIRS", "SNMPCONFPATH", "SNMP_PERSISTENT_DIR"}, k) {
			env = append(env, kv)
		}
	}
	env = append(env, "SNMPCONFPATH="+conf, "SNMP_PERSISTENT_DIR="+state)
	if !installed {
		return env
	}
	staged := t.TempDir()
	files, _ := filepath.Glob(filepath.Join("..", "..", "MIBs", "00-subagent-*.txt"))
	for _, f := range append(files, filepath.Join("..", "..", "MIBs", "SUBAGENT-MIB.txt")) {
		b, err := os.ReadFile(f)
		if err == nil {
			err = os.WriteFile(filepath.Join(staged, filepath.Base(f)), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(files) != 4 {
		t.Fatalf("MIBs holds %d base modules, want 4", len(files))
	}
	_, stderr, _ := mibtest.Run(t, env, "snmptranslate", "-Dinit_mib", ".1")
	m := regexp.MustCompile(`Seen MIBDIRS: Looking in '([^']*)'`).FindStringSubmatch(stderr)
	if m == nil || !slices.Contains(strings.Split(m[1], ":"), "/usr/share/snmp/mibs") {
		t.Fatalf("net-snmp's default MIB path lacks /usr/share/snmp/mibs:\n%s", stderr)
	}
	return append(env, "MIBDIRS="+strings.ReplaceAll(":"+m[1]+":", ":/usr/share/snmp/mibs:", ":"+staged+":"))
}

// runDoc runs a documentation block with bash from the repository's
// directory, the daemon's address in place of 127.0.0.1:1161.
func runDoc(t *testing.T, env []string, block, addr string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command("bash", "-e", "-c", strings.ReplaceAll(block, "127.0.0.1:1161", addr))
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = env
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s%s", block, err, o.String(), e.String())
	}
	return o.String(), e.String()
}

// The MIB examples of README.md and docs/MIB.md run as printed against a
// daemon serving the fixture host on a port of the test's (the only
// change to the commands: its address for 127.0.0.1:1161), with the
// shipped files only (Debian's stock snmp.conf, no IETF module needed):
// from the checkout (-M +MIBs), and, for MIB.md's, as `make install` puts
// the files in net-snmp's directory. Each prints its table or values and
// nothing on stderr; the issue's `-m +SUBAGENT-MIB` prints the table too,
// and its complaints concern only net-snmp's own default modules.
func TestMIBDocExamplesRunAsPrinted(t *testing.T) {
	mibtest.Require(t, "snmptable", "snmpwalk", "snmptranslate")
	addr := fmt.Sprintf("127.0.0.1:%d", snmpdtest.FreeUDPPort(t))
	e := newEnv(t)
	e.start("--listen", addr)

	// README.md: from the checkout.
	_, block := docBlock(t, "README.md", "## Names for managers: one MIB for every host", 1)
	out, stderr := runDoc(t, mibEnv(t, false), block, addr)
	if stderr != "" {
		t.Errorf("README's MIB block wrote to stderr:\n%s", stderr)
	}
	for _, want := range []string{"SNMP table: SUBAGENT-MIB::diskTable", " sda ", "SUBAGENT-MIB::memRealPctFree.0 = Gauge32: "} {
		if !strings.Contains(out, want) {
			t.Errorf("README's MIB block printed no %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`memRealPctFree\.0 = Gauge32: \d+\.\d\d percent`).MatchString(out) {
		t.Errorf("memRealPctFree not in decimal with its units:\n%s", out)
	}

	installed := mibEnv(t, true)
	// MIB.md's cpuTable and the sample of its output: the same columns,
	// rows that exist.
	_, block = docBlock(t, "docs/MIB.md", "### The two views", 1)
	out, stderr = runDoc(t, installed, block, addr)
	_, sample := docBlock(t, "docs/MIB.md", "### The two views", 2)
	lines := strings.Split(strings.TrimSpace(sample), "\n")
	header := strings.Fields(strings.TrimSuffix(lines[0], "..."))
	got := strings.Split(out, "\n")
	if stderr != "" || len(got) < 4 || !slices.Equal(strings.Fields(got[2])[:len(header)-1], header[:len(header)-1]) {
		t.Errorf("MIB.md's cpuTable: header %v, printed:\n%s%s", header, out, stderr)
	}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if !regexp.MustCompile(`(?m)^\s+` + f[0] + `\s+` + f[1] + `\s+`).MatchString(out) {
			t.Errorf("MIB.md shows a cpuTable row %s %s that the table does not have:\n%s", f[0], f[1], out)
		}
	}

	// MIB.md's "Loading it on Debian".
	_, block = docBlock(t, "docs/MIB.md", "### Loading it on Debian", 1)
	out, stderr = runDoc(t, installed, block, addr)
	if stderr != "" || !strings.Contains(out, "SNMP table: SUBAGENT-MIB::diskTable") || !strings.Contains(out, " sda ") {
		t.Errorf("MIB.md's snmptable of diskTable:\n%s%s", out, stderr)
	}
	// The command, with "+": the table, and no complaint about
	// SUBAGENT-MIB or what it imports.
	out, stderr = runDoc(t, installed, "snmptable -v2c -c public -m +SUBAGENT-MIB 127.0.0.1:1161 diskTable", addr)
	if !strings.Contains(out, "SNMP table: SUBAGENT-MIB::diskTable") {
		t.Errorf("-m +SUBAGENT-MIB: no table:\n%s%s", out, stderr)
	}
	for _, m := range regexp.MustCompile(`(?:Cannot find module \(|Did not find '[^']*' in module )([A-Za-z0-9-]+)`).FindAllStringSubmatch(stderr, -1) {
		if slices.Contains(append(mibtest.Imported, "SUBAGENT-MIB"), m[1]) {
			t.Errorf("-m +SUBAGENT-MIB: %s", m[0])
		}
	}
	t.Logf("-m +SUBAGENT-MIB: %d lines on stderr, about net-snmp's own default modules", strings.Count(stderr, "\n"))
}

// MIB.md's Prometheus block runs as printed in a copy of the tree whose
// bin/tools holds the pinned tools: the generator makes snmp.yml from MIBs
// alone, the exporter scrapes a daemon serving the fixture host, and the
// block stops it. Only addresses change: the daemon's for 127.0.0.1:1161,
// a free port of the test's for the exporter's 127.0.0.1:9116.
func TestMIBDocPrometheusBlockRunsAsPrinted(t *testing.T) {
	ex := mibtest.InstallExporter(t)
	_, block := docBlock(t, "docs/MIB.md", "## Prometheus (snmp_exporter)", 1)
	web := freeTCPAddr(t)
	if !strings.Contains(block, "127.0.0.1:9116") {
		t.Fatalf("the block names no exporter address 127.0.0.1:9116:\n%s", block)
	}
	block = strings.ReplaceAll(block, "127.0.0.1:9116", web)
	addr := fmt.Sprintf("127.0.0.1:%d", snmpdtest.FreeUDPPort(t))
	e := newEnv(t)
	e.start("--listen", addr)

	dir := sourceTree(t)
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(ex.Generator), filepath.Join(dir, "bin", "tools")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-e", "-c", strings.ReplaceAll(block, "127.0.0.1:1161", addr))
	cmd.Dir = dir
	cmd.Env = mibEnv(t, false)
	var o, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s%s", block, err, o.String(), stderr.String())
	}
	out := o.String()
	for _, re := range []string{`(?m)^# TYPE memRealPctFree gauge$`, `(?m)^memRealPctFree \d+\.\d+$`,
		`(?m)^cpuIdle\{cpuIndex="1",cpuName="cpu0"\} [0-9.e+]+$`, `(?m)^# TYPE cpuIdle counter$`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("the exporter's answer has no line %s:\n%s", re, out)
		}
	}
}
