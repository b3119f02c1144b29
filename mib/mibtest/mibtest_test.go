package mibtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const header = `LINT-TEST-MIB DEFINITIONS ::= BEGIN
IMPORTS
    MODULE-IDENTITY, OBJECT-TYPE, Gauge32, Counter64, enterprises FROM SNMPv2-SMI
    MODULE-COMPLIANCE, OBJECT-GROUP FROM SNMPv2-CONF;
lintTestMIB MODULE-IDENTITY
    LAST-UPDATED "202611230000Z"
    ORGANIZATION "o"
    CONTACT-INFO "c"
    DESCRIPTION "d"
    REVISION "202611230000Z"
    DESCRIPTION "r"
    ::= { enterprises 32473 9 }
`

// The harness must see what smilint reports, or a clean result means
// nothing: an undefined parent is an error, an unused import a warning.
func TestLintReportsErrorsAndWarnings(t *testing.T) {
	Require(t, "smilint")
	file := filepath.Join(t.TempDir(), "LINT-TEST-MIB.txt")
	body := header + `
broken OBJECT-TYPE
    SYNTAX Gauge32
    MAX-ACCESS read-only
    STATUS current
    DESCRIPTION "x"
    ::= { nowhere 1 }
END
`
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	var errs int
	tags := map[string]bool{}
	for _, f := range Lint(t, file, BaseDirs(t)) {
		tags[f.Tag] = true
		if f.IsError() {
			errs++
		}
	}
	if errs == 0 {
		t.Errorf("no error for an undefined parent: %v", tags)
	}
	if !tags["import-unused"] {
		t.Errorf("no warning for the unused Counter64 import: %v", tags)
	}
}

func TestTranslateAndDescribe(t *testing.T) {
	Require(t, "snmptranslate")
	dir := t.TempDir()
	body := header + `
gauge OBJECT-TYPE
    SYNTAX Gauge32
    UNITS "things"
    MAX-ACCESS read-only
    STATUS current
    DESCRIPTION "x"
    ::= { lintTestMIB 1 }
END
`
	if err := os.WriteFile(filepath.Join(dir, "LINT-TEST-MIB.txt"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	dirs := append(BaseDirs(t), dir)
	env := NetSNMPEnv(t)
	got := Translate(t, env, dirs, "LINT-TEST-MIB", nil, []string{".1.3.6.1.4.1.32473.9.1.0", ".1.3.6.1.4.1.32473.9.7.7"})
	if got[0] != "LINT-TEST-MIB::gauge.0" || got[1] != "LINT-TEST-MIB::lintTestMIB.7.7" {
		t.Errorf("got %v", got)
	}
	d := Describe(t, env, dirs, "LINT-TEST-MIB", []string{"LINT-TEST-MIB::gauge"})["LINT-TEST-MIB::gauge"]
	if d != (Definition{Macro: "OBJECT-TYPE", Syntax: "Gauge32", Units: "things", Access: "read-only"}) {
		t.Errorf("got %+v", d)
	}
}

// The shipped base modules (MIBs/00-subagent-*.txt) hold the values RFC
// 2578 registers: the tests compare generated OIDs against what the tools
// derive from them, and managers load them where the IETF modules are
// missing.
func TestStandinsHoldTheRegisteredValues(t *testing.T) {
	Require(t, "snmptranslate")
	want := map[string]string{
		"org": ".1.3", "dod": ".1.3.6", "internet": ".1.3.6.1", "mgmt": ".1.3.6.1.2", "mib-2": ".1.3.6.1.2.1",
		"experimental": ".1.3.6.1.3", "private": ".1.3.6.1.4", "enterprises": ".1.3.6.1.4.1",
		"directory": ".1.3.6.1.1", "transmission": ".1.3.6.1.2.1.10", "security": ".1.3.6.1.5",
		"snmpV2": ".1.3.6.1.6", "snmpDomains": ".1.3.6.1.6.1", "snmpProxys": ".1.3.6.1.6.2", "snmpModules": ".1.3.6.1.6.3",
	}
	var names []string
	for n := range want {
		names = append(names, "SNMPv2-SMI::"+n)
	}
	got := Translate(t, NetSNMPEnv(t), []string{standinDir(t)}, "SNMPv2-SMI", []string{"-On"}, names)
	for i, n := range names {
		if w := want[strings.TrimPrefix(n, "SNMPv2-SMI::")]; got[i] != w {
			t.Errorf("%s: stand-in gives %s, RFC 2578 %s", n, got[i], w)
		}
	}
}
