// Package mibtest runs the real MIB tools on generated modules for tests:
// libsmi's smilint and net-snmp's snmptranslate, with the IETF modules the
// generated module imports. Those come from the system when installed,
// otherwise from the project's own base modules shipped in MIBs/
// (00-subagent-*.txt; Debian ships the IETF modules only in the non-free
// snmp-mibs-downloader).
package mibtest

import (
	"bytes"
	"embed"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// standins holds what only the tests use: NOTIFICATION-LOG-MIB.
//
//go:embed standins
var standins embed.FS

// ShippedDir is the repository's MIBs directory: SUBAGENT-MIB and the
// project's base modules.
var ShippedDir = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "MIBs")
}()

// ShippedBase names the file in ShippedDir of each imported module.
func ShippedBase(mod string) string { return "00-subagent-" + mod + ".txt" }

// Imported are the modules a generated module imports.
var Imported = []string{"SNMPv2-SMI", "SNMPv2-TC", "SNMPv2-CONF", "HCNUM-TC"}

// systemDirs are where distributions install the IETF modules.
var systemDirs = []string{
	"/usr/share/snmp/mibs/ietf", "/usr/share/snmp/mibs", "/var/lib/mibs/ietf",
	"/usr/share/mibs/ietf", "/var/lib/snmp/mibs/ietf", "/usr/local/share/snmp/mibs",
}

// packages name the Debian package of each tool.
var packages = map[string]string{"smilint": "smitools", "snmptranslate": "snmp", "snmpget": "snmp", "snmpwalk": "snmp"}

// Require fails the test when a tool is missing, naming its Debian
// package; under -short it skips instead.
func Require(t testing.TB, tools ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: not running the MIB tools")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed (Debian package %s); the MIB tests need the packages smitools and snmp: run make test-deps", tool, packages[tool])
		}
	}
}

// BaseDirs returns a directory of the test's own holding just the
// imported modules: the system's copies when all of them are installed,
// otherwise the project's shipped base modules. The tools never see the rest of a system MIB
// folder, whose other modules (snmp-mibs-downloader installs about 300,
// some importing modules kept elsewhere) would make their results depend
// on the machine.
func BaseDirs(t testing.TB) []string {
	t.Helper()
	var found []string
	for _, mod := range Imported {
		f := findModule(mod)
		if f == "" {
			return []string{standinDir(t)}
		}
		found = append(found, f)
	}
	dir := t.TempDir()
	for _, f := range found {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("using the system's IETF modules %s", strings.Join(found, " "))
	return []string{dir}
}

// findModule returns the file of the system's copy of mod, "" when none.
func findModule(mod string) string {
	for _, d := range systemDirs {
		for _, ext := range []string{"", ".txt", ".my", ".mib"} {
			f := filepath.Join(d, mod+ext)
			if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() {
				return f
			}
		}
	}
	return ""
}

// standinDir writes the shipped base modules to a temporary directory,
// named after their modules as libsmi looks them up.
func standinDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, mod := range Imported {
		b, err := os.ReadFile(filepath.Join(ShippedDir, ShippedBase(mod)))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, mod), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("IETF modules not installed; using the project's own base modules MIBs/00-subagent-*.txt")
	return dir
}

// NetSNMPEnv keeps net-snmp tools away from the user's and the system's
// configuration and state: only -M and -m decide what is loaded.
func NetSNMPEnv(t testing.TB) []string {
	t.Helper()
	dir := t.TempDir()
	// net-snmp announces creating this directory on stderr otherwise.
	if err := os.MkdirAll(filepath.Join(dir, "cert_indexes"), 0o755); err != nil {
		t.Fatal(err)
	}
	return append(os.Environ(), "MIBS=", "MIBDIRS=", "SNMPCONFPATH="+dir, "SNMP_PERSISTENT_DIR="+dir)
}

// Run runs a tool and returns its standard output and error.
func Run(t testing.TB, env []string, name string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// NotificationLogDirs returns a directory of the test's own holding
// NOTIFICATION-LOG-MIB (RFC 3014) and what it imports: the system's copies
// when they are installed (in the usual folders or MIBDIRS; real), otherwise the stand-ins with the
// project's own NOTIFICATION-LOG-MIB stand-in.
func NotificationLogDirs(t testing.TB) (dirs []string, real bool) {
	t.Helper()
	mods := append([]string{"NOTIFICATION-LOG-MIB", "SNMP-FRAMEWORK-MIB"}, Imported...)
	var found []string
	for _, mod := range mods {
		f := findModule(mod)
		for _, d := range strings.Split(os.Getenv("MIBDIRS"), ":") { // net-snmp's own search path too
			if d = strings.TrimLeft(d, "+-"); f == "" && d != "" {
				if st, err := os.Stat(filepath.Join(d, mod+".txt")); err == nil && st.Mode().IsRegular() {
					f = filepath.Join(d, mod+".txt")
				} else if st, err := os.Stat(filepath.Join(d, mod)); err == nil && st.Mode().IsRegular() {
					f = filepath.Join(d, mod)
				}
			}
		}
		if f != "" {
			found = append(found, f)
		}
	}
	dir := t.TempDir()
	if len(found) < len(mods) {
		dir = standinDir(t)
		b, err := standins.ReadFile("standins/NOTIFICATION-LOG-MIB")
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "NOTIFICATION-LOG-MIB"), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
		return []string{dir}, false
	}
	for _, f := range found {
		b, err := os.ReadFile(f)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return []string{dir}, true
}
