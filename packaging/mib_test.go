package packaging

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// baseModules are the modules SUBAGENT-MIB imports, shipped by the
// project as MIBs/00-subagent-<module>.txt for hosts without the IETF ones.
var baseModules = []string{"SNMPv2-SMI", "SNMPv2-TC", "SNMPv2-CONF", "HCNUM-TC"}

// netsnmp runs a net-snmp tool away from the user's and the host's
// configuration: conf holds the only snmp.conf it reads, state its
// persistent files (and so a MIB index of its own), mibdirs its search
// path ("" for net-snmp's compiled-in one).
type netsnmp struct {
	t              *testing.T
	conf, mibdirs  string
	stdout, stderr string
}

func newNetsnmp(t *testing.T, snmpConf, mibdirs string) *netsnmp {
	t.Helper()
	if _, err := exec.LookPath("snmptranslate"); err != nil {
		t.Fatal("snmptranslate is not installed (Debian package snmp); run make test-deps")
	}
	conf := t.TempDir()
	if err := os.WriteFile(filepath.Join(conf, "snmp.conf"), []byte(snmpConf), 0o644); err != nil {
		t.Fatal(err)
	}
	return &netsnmp{t: t, conf: conf, mibdirs: mibdirs}
}

func (n *netsnmp) run(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	state := n.t.TempDir()
	os.MkdirAll(filepath.Join(state, "cert_indexes"), 0o755) // else net-snmp announces it on stderr
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "MIBS" && k != "MIBDIRS" && k != "SNMPCONFPATH" && k != "SNMP_PERSISTENT_DIR" {
			env = append(env, kv)
		}
	}
	env = append(env, "SNMPCONFPATH="+n.conf, "SNMP_PERSISTENT_DIR="+state)
	if n.mibdirs != "" {
		env = append(env, "MIBDIRS="+n.mibdirs)
	}
	cmd.Env = env
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	n.stdout, n.stderr = o.String(), e.String()
	return err
}

// read are the base modules net-snmp reads: it knows SNMPv2-CONF's
// macros and never reads that module.
var read = []string{"SNMPv2-SMI", "SNMPv2-TC", "HCNUM-TC"}

// debianConf is the line of Debian's /etc/snmp/snmp.conf (package snmp)
// that loads no module by default.
const debianConf = "mibs :\n"

// defaultMIBDirs and defaultMIBs are net-snmp's compiled-in search path
// and module list, as it reports them.
func defaultMIBDirs(t *testing.T) (dirs, mods []string) {
	t.Helper()
	n := newNetsnmp(t, "", "")
	n.run("snmptranslate", "-Dinit_mib", ".1")
	m := regexp.MustCompile(`Seen MIBDIRS: Looking in '([^']*)'`).FindStringSubmatch(n.stderr)
	m2 := regexp.MustCompile(`Seen MIBS: Looking in '([^']*)'`).FindStringSubmatch(n.stderr)
	if m == nil || m2 == nil {
		t.Fatalf("snmptranslate -Dinit_mib did not say its default MIB path and modules:\n%s", n.stderr)
	}
	return strings.Split(m[1], ":"), strings.Split(m2[1], ":")
}

// parsedFiles maps each module net-snmp read to the file it read it from
// (snmptranslate -Dparse-file).
func parsedFiles(t *testing.T, n *netsnmp, module string) map[string]string {
	t.Helper()
	if err := n.run("snmptranslate", "-Dparse-file", "-m", module, "-On", "SNMPv2-SMI::enterprises"); err != nil {
		t.Fatalf("snmptranslate -m %s: %v\n%s", module, err, n.stderr)
	}
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`Parsing file:\s+(\S+?)\.\.\.`).FindAllStringSubmatch(n.stderr, -1) {
		b, err := os.ReadFile(m[1])
		if err != nil {
			t.Fatal(err)
		}
		mod, _, _ := strings.Cut(strings.TrimSpace(regexp.MustCompile(`(?m)^\s*--.*$`).ReplaceAllString(string(b), "")), " ")
		out[mod] = m[1]
	}
	return out
}

// TestInstalledMIBLoadsWithNetSNMPsDefaults: `make install DESTDIR=d`
// with the default PREFIX puts SUBAGENT-MIB and the base modules it
// imports in net-snmp's own directory, /usr/share/snmp/mibs. With
// net-snmp's default search path (that directory from the staged tree,
// the ietf and iana ones the test's) and Debian's stock snmp.conf, the
// tools load the module with no message on a host without the IETF
// modules; with them installed, in the ietf directory (Debian's
// snmp-mibs-downloader) or beside ours (one folder, as other
// distributions have it), net-snmp reads theirs, never ours.
func TestInstalledMIBLoadsWithNetSNMPsDefaults(t *testing.T) {
	heavy(t)
	dest := filepath.Join(scratch, "default-prefix")
	run(t, tree, nil, "make", "--no-print-directory", "install", "DESTDIR="+dest)
	mibdir := filepath.Join(dest, "usr/share/snmp/mibs")
	for _, f := range append([]string{"SUBAGENT-MIB.txt"}, ours()...) {
		if _, err := os.Stat(filepath.Join(mibdir, f)); err != nil {
			t.Fatalf("make install with the default PREFIX: %v", err)
		}
	}

	dirs, mods := defaultMIBDirs(t)
	ietf, iana := t.TempDir(), t.TempDir()
	var path []string
	var found bool
	for _, d := range dirs {
		switch {
		case d == "/usr/share/snmp/mibs":
			d, found = mibdir, true
		case strings.HasSuffix(d, "/ietf"):
			d = ietf
		case strings.HasSuffix(d, "/iana"):
			d = iana
		case !strings.HasPrefix(d, "/usr/"):
			continue // the user's ~/.snmp/mibs
		}
		path = append(path, d)
	}
	if !found {
		t.Fatalf("net-snmp's default MIB path %v lacks /usr/share/snmp/mibs, where make install puts the MIB", dirs)
	}
	mibdirs := strings.Join(path, ":")

	// A stock host: the project's base modules, with no message.
	n := newNetsnmp(t, debianConf, mibdirs)
	if err := n.run("snmptranslate", "-m", "SUBAGENT-MIB", "-Td", "SUBAGENT-MIB::diskName"); err != nil || n.stderr != "" {
		t.Fatalf("snmptranslate -m SUBAGENT-MIB -Td SUBAGENT-MIB::diskName: %v\n%s", err, n.stderr)
	}
	for _, want := range []string{"TEXTUAL CONVENTION DisplayString", `DISPLAY-HINT "255a"`, "diskEntry(1) 2 }"} {
		if !strings.Contains(strings.Join(strings.Fields(n.stdout), " "), want) {
			t.Errorf("diskName's definition lacks %q:\n%s", want, n.stdout)
		}
	}
	parsed := parsedFiles(t, n, "SUBAGENT-MIB")
	for _, mod := range read {
		if want := filepath.Join(mibdir, "00-subagent-"+mod+".txt"); parsed[mod] != want {
			t.Errorf("stock host: %s read from %q, want %s", mod, parsed[mod], want)
		}
	}
	// With "+", net-snmp loads its compiled-in list too (not snmp.conf's),
	// whose IETF modules a stock host lacks: none of its complaints may
	// concern SUBAGENT-MIB or what it imports.
	if err := n.run("snmptranslate", "-m", "+SUBAGENT-MIB", "-On", "SUBAGENT-MIB::diskTable"); err != nil || strings.TrimSpace(n.stdout) != ".1.3.6.1.4.1.32473.1.200.1.4" {
		t.Fatalf("snmptranslate -m +SUBAGENT-MIB: %v %q\n%s", err, n.stdout, n.stderr)
	}
	missing := regexp.MustCompile(`Cannot find module \(([^)]+)\)`).FindAllStringSubmatch(n.stderr, -1)
	for _, m := range missing {
		if !slices.Contains(mods, m[1]) && !slices.Contains([]string{"SNMP-FRAMEWORK-MIB", "SNMP-VIEW-BASED-ACM-MIB", "INET-ADDRESS-MIB"}, m[1]) {
			t.Errorf("-m +SUBAGENT-MIB: cannot find %s, which is not one of net-snmp's default modules or what they import", m[1])
		}
	}
	t.Logf("-m +SUBAGENT-MIB on a host without the IETF modules: %d modules of net-snmp's default list not found (%d lines on stderr)",
		len(missing), strings.Count(n.stderr, "\n"))

	// The IETF modules, marked so that their use shows: in the ietf
	// directory under Debian's names, then beside ours under the names
	// other distributions use.
	real := func(dir, suffix string) {
		t.Helper()
		for _, mod := range baseModules {
			b, err := os.ReadFile(filepath.Join(repo, "MIBs", "00-subagent-"+mod+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			if mod == "SNMPv2-SMI" {
				b = []byte(strings.Replace(string(b), "\nEND", "\nietfMarker OBJECT IDENTIFIER ::= { enterprises 32473 254 }\nEND", 1))
			}
			if err := os.WriteFile(filepath.Join(dir, mod+suffix), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func(what, dir, suffix string) {
		t.Helper()
		parsed := parsedFiles(t, n, "SUBAGENT-MIB")
		for _, mod := range read {
			if got := parsed[mod]; got != filepath.Join(dir, mod+suffix) {
				t.Errorf("%s: %s read from %s, want the IETF one in %s", what, mod, got, dir)
			}
		}
		if err := n.run("snmptranslate", "-m", "SUBAGENT-MIB", "-On", "SNMPv2-SMI::ietfMarker", "SUBAGENT-MIB::diskTable"); err != nil || n.stderr != "" {
			t.Errorf("%s: %v\n%s%s", what, err, n.stdout, n.stderr)
		}
	}
	real(ietf, "")
	check("IETF modules in the ietf directory", ietf, "")
	for _, mod := range baseModules {
		os.Remove(filepath.Join(ietf, mod))
	}
	real(mibdir, ".txt")
	defer func() {
		for _, mod := range baseModules {
			os.Remove(filepath.Join(mibdir, mod+".txt"))
		}
	}()
	check("IETF modules beside ours", mibdir, ".txt")
}

// ours are the file names of the project's base modules.
func ours() []string {
	var out []string
	for _, mod := range baseModules {
		out = append(out, fmt.Sprintf("00-subagent-%s.txt", mod))
	}
	return out
}
