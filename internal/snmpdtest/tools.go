// Package snmpdtest runs net-snmp's real snmpd and snmptrapd for
// integration tests: each instance lives in its own temporary directory,
// listens on 127.0.0.1 and a Unix socket only, keeps no state outside that
// directory and is stopped by PID when the test ends. It also runs the
// command-line tools (snmpget, snmpwalk, snmpbulkwalk, snmpset, snmptable) against it
// and parses their output.
package snmpdtest

import (
	"os/exec"
	"testing"
)

// Tools are the absolute paths of the net-snmp programs the tests use.
type Tools struct {
	Snmpd, Snmptrapd, Agentxtrap                          string
	Snmpget, Snmpgetnext, Snmpwalk, Snmpbulkwalk, Snmpset string
	Snmptable                                             string
}

// FindTools locates the net-snmp programs. A missing program fails the test
// with what to install; under -short the test is skipped instead, as
// integration tests are not short.
func FindTools(t testing.TB) Tools {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test with a real snmpd: skipped under -short")
	}
	var tools Tools
	var missing []string
	for _, p := range []struct {
		name string
		dst  *string
		pkg  string
	}{
		{"snmpd", &tools.Snmpd, "snmpd"},
		{"snmptrapd", &tools.Snmptrapd, "snmptrapd"},
		{"agentxtrap", &tools.Agentxtrap, "snmp"},
		{"snmpget", &tools.Snmpget, "snmp"},
		{"snmpgetnext", &tools.Snmpgetnext, "snmp"},
		{"snmpwalk", &tools.Snmpwalk, "snmp"},
		{"snmpbulkwalk", &tools.Snmpbulkwalk, "snmp"},
		{"snmpset", &tools.Snmpset, "snmp"},
		{"snmptable", &tools.Snmptable, "snmp"},
	} {
		path, err := exec.LookPath(p.name)
		if err != nil {
			// snmpd and snmptrapd live in /usr/sbin, often not in a user's PATH.
			if path, err = exec.LookPath("/usr/sbin/" + p.name); err != nil {
				missing = append(missing, p.name+" (Debian package "+p.pkg+")")
				continue
			}
		}
		*p.dst = path
	}
	if len(missing) > 0 {
		t.Fatalf("net-snmp programs missing: %v. Install the Debian packages snmpd, snmp and snmptrapd: "+
			"run `make test-deps` (scripts/install-test-deps.sh) as root, or run only unit tests with -short", missing)
	}
	return tools
}
