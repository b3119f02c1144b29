package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/mib/mibtest"
)

// runMIB runs subagent mib with -o into a fresh directory named after the
// module and returns the file, what it holds ("" when not written), the
// stdout and stderr, and the exit code.
func runMIB(t *testing.T, e *env, module string, args ...string) (file, text, stdout, stderr string, code int) {
	t.Helper()
	file = filepath.Join(t.TempDir(), module+".txt")
	stdout, stderr, code = e.run(append([]string{"mib", "-o", file}, e.args(args...)...)...)
	if b, err := os.ReadFile(file); err == nil {
		text = string(b)
	}
	return file, text, stdout, stderr, code
}

// The module that `subagent mib` writes from the running daemon passes
// smilint at the strict level, names every OID a manager's walk through
// snmpd returns, and net-snmp shows the scaled floats in decimal with it.
func TestMIBNamesALiveWalkThroughSnmpd(t *testing.T) {
	mibtest.Require(t, "snmpwalk", "snmptranslate", "smilint")
	s := snmpdtest.Start(t, snmpdtest.Options{})
	e := newEnv(t)
	e.start("--agentx", s.AgentXAddress)
	waitServed(t, s, idleOID, 10*time.Second)

	module, text, _, stderr, code := runMIB(t, e, "SUBAGENT-MIB")
	if code != 0 {
		t.Fatalf("subagent mib: %s", stderr)
	}
	// Agent/agentx exists only in a daemon with an AgentX session.
	if !strings.Contains(text, "SUBAGENT-MIB DEFINITIONS ::= BEGIN") || !strings.Contains(text, "\nagentAgentx OBJECT-IDENTITY") {
		t.Fatalf("no module of the daemon's tree written (stderr %q):\n%.300s", stderr, text)
	}
	dirs := append(mibtest.BaseDirs(t), filepath.Dir(module))
	mibtest.LintClean(t, module, dirs)

	env := mibtest.NetSNMPEnv(t)
	walk := func(flags ...string) []string {
		t.Helper()
		args := append([]string{"-v2c", "-c", s.Community, "-t", "2", "-r", "1", "-M", "+" + strings.Join(dirs, ":"), "-m", "+SUBAGENT-MIB"}, flags...)
		out, stderr, err := mibtest.Run(t, env, "snmpwalk", append(args, "udp:"+s.Addr, base)...)
		if err != nil {
			t.Fatalf("snmpwalk: %v\n%s", err, stderr)
		}
		return strings.Split(strings.TrimSpace(out), "\n")
	}
	lines := walk()
	if len(lines) < 100 {
		t.Fatalf("walk returned %d lines", len(lines))
	}
	var names []string
	for _, l := range lines {
		if !strings.HasPrefix(l, "SUBAGENT-MIB::") {
			t.Fatalf("walk line not resolved to a name: %q", l)
		}
		names = append(names, strings.Fields(l)[0])
	}
	// Mem/Real/%free carries value*100 on the wire; with the module,
	// net-snmp prints it with two decimals.
	pctFree := regexp.MustCompile(`(?m)^SUBAGENT-MIB::memRealPctFree\.0 = Gauge32: \d+\.\d\d percent$`)
	if out := strings.Join(lines, "\n"); !pctFree.MatchString(out) {
		t.Fatalf("Mem/Real/%%free not shown in decimal:\n%s", grepLines(out, "memReal"))
	}

	// Every name of the walk translates back to an OID, every OID of a
	// numeric walk to a name and back; the walks are paired by OID.
	namedOIDs := mibtest.Translate(t, env, dirs, "SUBAGENT-MIB", []string{"-On"}, names)
	var oids []string
	for _, l := range walk("-On") {
		oids = append(oids, strings.Fields(l)[0])
	}
	numNames := mibtest.Translate(t, env, dirs, "SUBAGENT-MIB", nil, oids)
	for i, back := range mibtest.Translate(t, env, dirs, "SUBAGENT-MIB", []string{"-On"}, numNames) {
		if back != oids[i] {
			t.Errorf("%s is %s, which translates back to %s", oids[i], numNames[i], back)
		}
	}
	common, err := compareWalks(zip(namedOIDs, names), zip(oids, numNames))
	if err != nil {
		t.Fatal(err)
	}
	if common < 100 {
		t.Fatalf("the walks share only %d OIDs", common)
	}
}

func zip(keys, values []string) map[string]string {
	m := make(map[string]string, len(keys))
	for i, k := range keys {
		m[k] = values[i]
	}
	return m
}

// undeclaredRE matches a name net-snmp gives an undeclared instance, such
// as a process: the context's descriptor, then instance, statistic, 0.
var undeclaredRE = regexp.MustCompile(`::[A-Za-z0-9]+(\.\d+){3,}$`)

// compareWalks pairs two walks (OID -> name) by OID: an OID both met must
// have the same name in both. Instances of continuously instantiable
// contexts (processes) come and go between walks, so those alone may be
// in one walk only. It returns how many OIDs the walks share.
func compareWalks(a, b map[string]string) (common int, err error) {
	for oid, name := range a {
		other, ok := b[oid]
		switch {
		case ok && other != name:
			return 0, fmt.Errorf("%s is %s in one walk and %s in the other", oid, name, other)
		case ok:
			common++
		case !undeclaredRE.MatchString(name):
			return 0, fmt.Errorf("%s (%s) is in one walk only", oid, name)
		}
	}
	for oid, name := range b {
		if _, ok := a[oid]; !ok && !undeclaredRE.MatchString(name) {
			return 0, fmt.Errorf("%s (%s) is in one walk only", oid, name)
		}
	}
	return common, nil
}

// A process starting or ending between the walks shifts every later line;
// paired by OID, the walks still agree, and a real difference still fails.
func TestCompareWalksPairsByOID(t *testing.T) {
	first := map[string]string{
		".1.1.0": "M::cpuIdle.0", ".1.10.100.7.1.0": "M::procPid.7.1.0", ".1.11.0": "M::fsUsed.0",
	}
	second := map[string]string{
		".1.1.0": "M::cpuIdle.0", ".1.10.100.5.1.0": "M::procPid.5.1.0", ".1.11.0": "M::fsUsed.0",
	}
	if n, err := compareWalks(first, second); err != nil || n != 2 {
		t.Errorf("a process came and went: %d, %v", n, err)
	}
	second[".1.11.0"] = "M::fsFree.0"
	if _, err := compareWalks(first, second); err == nil {
		t.Error("different names for one OID accepted")
	}
	delete(second, ".1.11.0")
	if _, err := compareWalks(first, second); err == nil {
		t.Error("a declared statistic missing from one walk accepted")
	}
}

// --module, --include and --base-oid shape the module; each written
// module passes smilint at the strict level.
func TestMIBCommandOptions(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		module   string
		args     []string
		has, not []string
	}{
		{"ACME-PERF-MIB", []string{"--module", "ACME-PERF-MIB"},
			[]string{"ACME-PERF-MIB DEFINITIONS ::= BEGIN", "\nacmePerfMIB MODULE-IDENTITY", "\nacmePerfCompliance MODULE-COMPLIANCE", "::= { enterprises 32473 1 }"},
			[]string{"subagentMIB"}},
		{"SUBAGENT-MIB", []string{"--include", "CPU/", "--include", "Mem/Real/%free"},
			[]string{"\ncpuIdle OBJECT-TYPE", "\ncpuTable OBJECT-TYPE", "\nmemRealPctFree OBJECT-TYPE", "describes only CPU/, Mem/Real/%free."},
			[]string{"\nmemRealSize ", "\ndisk ", "\nprocPid ", "\ncpuCpu0Idle "}},
		// Another base: every OID differs from the shipped module's, so
		// the module has another name.
		{"SUBAGENT-HOST-MIB", []string{"--base-oid", "1.3.6.1.3.77"},
			[]string{"SUBAGENT-HOST-MIB DEFINITIONS ::= BEGIN", "::= { experimental 77 }", "\ncpuIdle OBJECT-TYPE"},
			[]string{"enterprises"}},
		// The host's own instances as scalars, on request: its own module.
		{"SUBAGENT-HOST-MIB", []string{"--instances", "--include", "CPU/"},
			[]string{"SUBAGENT-HOST-MIB DEFINITIONS ::= BEGIN", "\ncpuCpu0Idle OBJECT-TYPE", "\ncpuTotalUser OBJECT-TYPE", "\ncpuIdle OBJECT-TYPE"},
			[]string{"\nmemRealPctFree "}},
	}
	var files []string
	for _, c := range cases {
		file, text, stdout, stderr, code := runMIB(t, e, c.module, append([]string{"--local"}, c.args...)...)
		files = append(files, file)
		if code != 0 || stdout != "" {
			t.Fatalf("%v: exit %d, stdout %q, stderr %s", c.args, code, stdout, stderr)
		}
		for _, s := range c.has {
			if !strings.Contains(text, s) {
				t.Errorf("%v: module lacks %q", c.args, s)
			}
		}
		for _, s := range c.not {
			if strings.Contains(text, s) {
				t.Errorf("%v: module has %q", c.args, s)
			}
		}
	}
	mibtest.Require(t, "smilint")
	for _, f := range files {
		mibtest.LintClean(t, f, append(mibtest.BaseDirs(t), filepath.Dir(f)))
	}
}

// A bad value of each option fails with a message naming it, a non-zero
// exit and no file.
func TestMIBCommandRejectsBadOptions(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--module", "bad_name"}, `module name "bad_name": must start with an uppercase letter`},
		{[]string{"--module", "SUB--MIB"}, `module name "SUB--MIB"`},
		{[]string{"--include", "Nope/"}, `include "Nope/": no context or statistic with that path`},
		{[]string{"--include", "CPU/", "--include", "CPU/cpu99/"}, `include "CPU/cpu99/"`},
		{[]string{"--base-oid", "1.3.x"}, `base_oid: OID "1.3.x"`},
		{[]string{"--base-oid", "2.5.4.3"}, `base OID 2.5.4.3 is not below internet`},
	}
	for _, c := range cases {
		_, text, stdout, stderr, code := runMIB(t, e, "SUBAGENT-MIB", append([]string{"--local"}, c.args...)...)
		if code == 0 || !strings.HasPrefix(stderr, "subagent: ") || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want a failure saying %s", c.args, code, stderr, c.want)
		}
		if text != "" || stdout != "" {
			t.Errorf("%v: output written", c.args)
		}
	}
}

// From a running daemon the module's base is the served tree's, whatever
// the configuration says, unless --base-oid overrides it.
func TestMIBBaseFromTheDaemon(t *testing.T) {
	e := newEnv(t)
	e.start("--base-oid", "1.3.6.1.4.1.99999.3")
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "::= { enterprises 99999 3 }"},
		{[]string{"--base-oid", "1.3.6.1.3.77"}, "::= { experimental 77 }"},
	} {
		_, text, _, stderr, code := runMIB(t, e, "SUBAGENT-HOST-MIB", c.args...)
		if code != 0 || strings.Contains(stderr, "reading this host directly") {
			t.Fatalf("%v: exit %d, %s", c.args, code, stderr)
		}
		// Not the shipped module's OIDs: not its name either.
		if !strings.Contains(text, "\nSUBAGENT-HOST-MIB DEFINITIONS") || !strings.Contains(stderr, "the module is SUBAGENT-HOST-MIB") {
			t.Errorf("%v: a module of another base is not named SUBAGENT-HOST-MIB (stderr %q)", c.args, stderr)
		}
		if !strings.Contains(text, c.want) || !strings.Contains(text, "\nagent OBJECT-IDENTITY") {
			t.Errorf("%v: module of the daemon's tree lacks %q", c.args, c.want)
		}
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// `subagent mib` writes the shipped module, byte for byte, whatever the
// host: the fixture host without swap (the shipped module's pagSpTable
// and pagSpTotalSize come from the reference tree, not from the host), the
// same through a daemon serving it, and this machine itself.
func TestMIBIsTheShippedModuleOnAnyHost(t *testing.T) {
	shipped, err := os.ReadFile("../../MIBs/SUBAGENT-MIB.txt")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	// The fixture's /proc with an empty swap table.
	proc := filepath.Join(t.TempDir(), "proc")
	if out, err := exec.Command("cp", "-a", e.proc, proc).CombinedOutput(); err != nil {
		t.Fatalf("copying the fixture: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(proc, "swaps"), []byte("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.proc = proc
	if stdout, _, _ := e.run(append([]string{"peek", "--local"}, e.args("PagSp/")...)...); strings.Contains(stdout, "sda3") {
		t.Fatalf("the fixture without swap still has a paging space:\n%s", stdout)
	}
	check := func(what string, args ...string) {
		t.Helper()
		_, text, _, stderr, code := runMIB(t, e, "SUBAGENT-MIB", args...)
		if code != 0 || strings.Contains(stderr, "SUBAGENT-HOST-MIB") {
			t.Fatalf("%s: exit %d, %s", what, code, stderr)
		}
		if text != string(shipped) {
			t.Errorf("%s: the module is not the shipped one (%d OBJECT-TYPEs, shipped %d):\n%s", what,
				strings.Count(text, " OBJECT-TYPE\n"), strings.Count(string(shipped), " OBJECT-TYPE\n"), mibtest.FirstDiff(string(shipped), text, "shipped", "written"))
		}
	}
	check("fixture without swap, --local", "--local")
	e.start()
	check("daemon on the fixture without swap")
	e.stop()
	e.proc, e.sys = "/proc", "/sys"
	check("this machine, --local", "--local")
}
