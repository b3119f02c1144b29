package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/docexamples"
	"github.com/perfagent/subagent/mib/schema"
)

// docs/HOTSETS.md's SNMPTT blocks, as printed, on the host as the package
// leaves it: in a mount and network namespace of the test's own, the
// host's /etc/snmp (snmptt.ini as Debian ships it) and the shipped MIBs
// beside net-snmp's in /usr/share/snmp/mibs, both copies bound over the
// real directories, so that nothing of the host changes. Block 1 converts
// the module into /etc/snmp/snmptt.conf.subagent; block 2 is
// /etc/snmp/snmptrapd.conf; snmptt.ini gets the settings the prose names.
// A hotsetCleared sent to that snmptrapd is logged by SNMPTT, named from
// the module, with its FORMAT.
func TestSnmpttDocBlocksRunAsPrinted(t *testing.T) {
	snmptt, _ := snmpttTools(t)
	if os.Geteuid() != 0 {
		t.Fatal("the blocks write /etc/snmp, which the test binds to a copy in a mount namespace of its own: that needs root; run it as root (CI does)")
	}
	for _, tool := range []string{"unshare", "mount", "ip", "snmptrapd", "snmptrap"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("no %s: %v", tool, err)
		}
	}
	blocks := docexamples.For(t, "TestSnmpttDocBlocksRunAsPrinted")
	if len(blocks) != 2 || blocks[1].Lang != "" {
		t.Fatalf("examples.txt gives this test %d blocks, want SNMPTT's command block and its snmptrapd.conf", len(blocks))
	}
	mibs, err := filepath.Abs("../../MIBs")
	if err != nil {
		t.Fatal(err)
	}
	h := t.TempDir()
	cleared := base + ".0." + schema.HotsetCleared.Arc[1:].String()
	ini := `sed -i -e 's/^net_snmp_perl_enable = .*/net_snmp_perl_enable = 1/' -e 's/^ipv6_enable = .*/ipv6_enable = 0/' \
  -e 's/^translate_log_trap_oid = .*/translate_log_trap_oid = 2/' \
  -e 's|^snmptt_conf_files = <<END$|&\n/etc/snmp/snmptt.conf.subagent|' /etc/snmp/snmptt.ini
`
	script := "set -e\nip link set lo up\n" +
		"mkdir \"$H/etc\" \"$H/mibs\" \"$H/log\"\n" +
		"cp -a /etc/snmp/. \"$H/etc/\"\ncp -a /usr/share/snmp/mibs/. \"$MIBS\"/*.txt \"$H/mibs/\"\n" +
		"mount --bind \"$H/etc\" /etc/snmp\nmount --bind \"$H/mibs\" /usr/share/snmp/mibs\nmount --bind \"$H/log\" /var/log/snmptt\n" +
		blocks[0].Text +
		"cat >/etc/snmp/snmptrapd.conf <<'EOF'\n" + blocks[1].Text + "EOF\n" + ini +
		"snmptrapd -On -f -Lf \"$H/snmptrapd.log\" -p \"$H/snmptrapd.pid\" udp:127.0.0.1:162 &\n" +
		"for i in $(seq 100); do [ -s \"$H/snmptrapd.pid\" ] && break; sleep 0.1; done\n" +
		"snmptrap -v2c -c public 127.0.0.1:162 '' ." + cleared + " ." + base + ".14.0.1 s pumpalarm\n" +
		"for i in $(seq 150); do grep -q hotsetCleared /var/log/snmptt/snmptt.log 2>/dev/null && break; sleep 0.1; done\n" +
		"cp /etc/snmp/snmptt.conf.subagent /var/log/snmptt/snmptt.log \"$H/\" 2>/dev/null || true\n" +
		"kill $(jobs -p)\n"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "--mount", "--propagation", "private", "--net", "bash", "-c", script)
	cmd.Env = append(os.Environ(), "H="+h, "MIBS="+mibs, "SNMP_PERSISTENT_DIR="+filepath.Join(h, "clientvar"), "TMPDIR="+h)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out testutil.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	conf, _ := os.ReadFile(filepath.Join(h, "snmptt.conf.subagent"))
	log, _ := os.ReadFile(filepath.Join(h, "snmptt.log"))
	if err != nil {
		trapd, _ := os.ReadFile(filepath.Join(h, "snmptrapd.log"))
		t.Fatalf("the blocks failed: %v\n%s\nsnmptrapd:\n%s", err, out.String(), trapd)
	}
	// Block 1's own report: every notification translated.
	if !regexp.MustCompile(`Failed translations:\s+0\n`).MatchString(out.String()) || strings.Contains(out.String(), "Cannot find module") {
		t.Errorf("snmpttconvertmib on the installed module:\n%s", out.String())
	}
	if !strings.Contains(string(conf), "EVENT hotsetCleared ."+cleared+" ") {
		t.Errorf("/etc/snmp/snmptt.conf.subagent has no EVENT hotsetCleared .%s:\n%s", cleared, testutil.Tail(string(conf), 20))
	}
	// Debian's log format: date, the trap (named: translate_log_trap_oid), severity, ...
	if !regexp.MustCompile(`(?m)^.* SUBAGENT-MIB::hotsetCleared Normal "Status Events" \S+ - A peer that raised a hotset notification.*pumpalarm$`).Match(log) {
		t.Errorf("SNMPTT (%s, Debian's snmptt.ini with the doc's settings) did not log the hotsetCleared named from the module:\n%s\n%s", snmptt, log, out.String())
	}
}
