package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/perfagent/subagent/internal/docexamples"
	"github.com/perfagent/subagent/internal/snmpdtest"
)

// docs/HOTSETS.md's writes over SNMP, as printed, to "localhost": in a
// network namespace of their own, snmpd on port 161 with the drop-in's
// settings, its commented SNMPv3 writer uncommented and the write
// community the doc names, and the daemon attached to it. The hotset row
// is created and destroyed, the RTime/LAN host row created.
func TestHotsetsDocSNMPWritesRunAsWritten(t *testing.T) {
	out, stderr := runDocWrites(t, "TestHotsetsDocSNMPWritesRunAsWritten", beside{})
	// By number: created; by name, from the installed module: listed, then destroyed.
	created := `iso\.3\.6\.1\.4\.1\.32473\.1\.110\.1\.1\.11\.7\.115\.110\.109\.112\.104\.111\.116 = INTEGER: 4`
	listed := `"?snmphot"?\s+Disk/\*/busy\s+3\s+80\b.*\bactive\b`
	destroyed := `SUBAGENT-MIB::hotsetDefRowStatus\."snmphot" = INTEGER: destroy\(6\)`
	host := `iso\.3\.6\.1\.4\.1\.32473\.1\.110\.2\.1\.4\.9\.49\.50\.55\.46\.48\.46\.48\.46\.57 = INTEGER: 4`
	if strings.Contains(stderr, "Cannot find module") || strings.Contains(stderr, "Unknown Object Identifier") {
		t.Errorf("the named commands did not find the installed module:\n%s", stderr)
	}
	for _, want := range []string{created, listed, destroyed, host} {
		if !regexp.MustCompile(`(?m)^` + want).MatchString(out) {
			t.Errorf("the blocks' output lacks %s:\n%s\n%s", want, out, stderr)
		}
	}
}

// runDocWrites runs the blocks listed for test, joined, beside snmpd on
// localhost:161 with the drop-in's settings (its SNMPv3 writer
// uncommented), the write community the docs name and the daemon
// attached (b's files and daemonArgs added), the module installed.
func runDocWrites(t *testing.T, test string, b beside) (stdout, stderr string) {
	tools := snmpdtest.FindTools(t)
	drop, err := os.ReadFile("../../packaging/snmpd-subagent.conf")
	if err != nil {
		t.Fatal(err)
	}
	conf := []string{"rocommunity public 127.0.0.1", "rwcommunity writer 127.0.0.1 .1.3.6.1.4.1.32473.1.110",
		"agentaddress udp:127.0.0.1:161", "[snmp] persistentDir $HARNESS_DIR/snmpvar", "agentXPerms 0700 0700"}
	for _, l := range strings.Split(string(drop), "\n") {
		switch {
		case strings.HasPrefix(l, "#createUser "), strings.HasPrefix(l, "#rwuser "):
			conf = append(conf, l[1:]) // the writer the doc has uncommented
		case strings.HasPrefix(l, "master "), strings.HasPrefix(l, "view "):
			conf = append(conf, l)
		}
	}
	conf = append(conf, "agentXSocket unix:$HARNESS_DIR/master")
	// net-snmp's tools keep their state in the test's directory, not
	// /var/lib/snmp, and read the host's /etc/snmp/snmp.conf as a user's
	// shell does (Debian's "mibs :" loads no module the command does not name).
	before := "mkdir -p \"$HARNESS_DIR/snmpvar\" \"$HARNESS_DIR/clientvar\"\n" +
		"export SNMP_PERSISTENT_DIR=\"$HARNESS_DIR/clientvar\" SNMPCONFPATH=\"/etc/snmp:$HARNESS_DIR/clientvar\"\ncat >\"$HARNESS_DIR/snmpd.conf\" <<EOF\n" + strings.Join(conf, "\n") + "\nEOF\n" +
		tools.Snmpd + " -f -Lf \"$HARNESS_DIR/snmpd.log\" -C -c \"$HARNESS_DIR/snmpd.conf\" -p \"$HARNESS_DIR/snmpd.pid\" -I -smux &\n" +
		"for i in $(seq 600); do [ -S \"$HARNESS_DIR/master\" ] && break; sleep 0.1; done\n"
	// After the daemon: its subtree registered with snmpd.
	wait := "for i in $(seq 600); do " + tools.Snmpget + " -v2c -c public -t 0.3 -r 0 localhost 1.3.6.1.4.1.32473.1.110.1.1.11 2>/dev/null | grep -qv 'No Such Object' && break; sleep 0.1; done\n"
	blocks := docexamples.For(t, test)
	var text []string
	for _, b := range blocks {
		text = append(text, b.Text)
	}
	joined := docexamples.Block{File: blocks[0].File, Line: blocks[0].Line, Text: wait + strings.Join(text, "")}
	b.listen, b.before, b.installMIB = "none", before, true
	b.daemonArgs = strings.TrimSpace("--agentx unix:$HARNESS_DIR/master " + b.daemonArgs)
	return runBeside(t, joined, b)
}
