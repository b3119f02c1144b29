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
)

// besideDaemon runs a README block as printed by bash in a copy of the
// tree, while a daemon built and started there as `make run` would serve
// (the block's reader has it running in another terminal), in the test's
// own directories and on a free port. It returns stdout and stderr.
func besideDaemon(t *testing.T, heading string) (string, string) {
	t.Helper()
	return besideDaemonOn(t, docexamples.Get(t, "README.md", heading, 1), "127.0.0.1:0", nil)
}

// beside is what the harness sets up around a block: the responder's
// address, files of the reader's, commands run before the daemon starts
// (a master snmpd) and flags it starts with.
type beside struct {
	listen     string
	files      map[string]string
	before     string
	daemonArgs string
	// installMIB runs the block in a mount namespace of its own too, with
	// the shipped MIBs/*.txt beside net-snmp's own in /usr/share/snmp/mibs,
	// as the package and `make install` put them.
	installMIB bool
}

// besideDaemonOn is besideDaemon for any block, with the daemon's
// responder on listen.
func besideDaemonOn(t *testing.T, block docexamples.Block, listen string, files map[string]string) (string, string) {
	t.Helper()
	return runBeside(t, block, beside{listen: listen, files: files})
}

// runBeside runs block as besideDaemon does, set up as o says. Unless the
// responder is on a free port, the block runs in a network namespace of
// its own, with loopback up, so that a fixed port (the README's 1161,
// snmpd's 161) is neither in the way of nor disturbed by anything else on
// the machine (a `make run` of the user's). That needs root, which the
// test fails (never skips) without.
func runBeside(t *testing.T, block docexamples.Block, o beside) (string, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the daemon in a copy of the tree and runs a doc block beside it: skipped under -short")
	}
	listen, files := o.listen, o.files
	isolated := listen != "127.0.0.1:0"
	if isolated {
		if os.Geteuid() != 0 {
			t.Fatalf("the block's own network namespace (responder %s) needs root; run it as root (CI does)", listen)
		}
		for _, tool := range []string{"unshare", "ip"} {
			if _, err := exec.LookPath(tool); err != nil {
				t.Fatalf("no %s: %v", tool, err)
			}
		}
	}
	for _, tool := range []string{"bash", "make", "cc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("no %s: %v", tool, err)
		}
	}
	dir, tmp := sourceTree(t), t.TempDir()
	for name, text := range files { // the reader's own files the block names
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := filepath.Join(tmp, "run")
	// The harness, not the block: the daemon of the reader's other
	// terminal, ready before the block starts; and, after it, every job
	// the block left, stopped.
	script := "make build >/dev/null\n" + o.before + "bin/subagent run " + o.daemonArgs + " >\"$DAEMON_LOG\" 2>&1 &\n" +
		"for i in $(seq 600); do [ -S \"$SUBAGENT_RUN_DIR/subagent.sock\" ] && break; sleep 0.1; done\n" +
		block.Text + "kill $(jobs -p)\n"
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	argv := []string{"bash", "-e", "-c", script}
	if isolated {
		prefix := "ip link set lo up\n"
		argv = []string{"unshare", "--net"}
		if o.installMIB {
			argv = append(argv, "--mount", "--propagation", "private")
			prefix += "mkdir \"$HARNESS_DIR/mibs\"\ncp -a /usr/share/snmp/mibs/. MIBs/*.txt \"$HARNESS_DIR/mibs/\"\n" +
				"mount --bind \"$HARNESS_DIR/mibs\" /usr/share/snmp/mibs\n"
		}
		argv = append(argv, "bash", "-e", "-c", prefix+script)
	} else if o.installMIB {
		t.Fatal("installMIB needs the block's own namespaces (a fixed listen address)")
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SUBAGENT_CONFIG=", "SUBAGENT_RUN_DIR="+run, "SUBAGENT_STATE_DIR="+filepath.Join(tmp, "state"),
		"SUBAGENT_LISTEN="+listen, "TMPDIR="+tmp, "DAEMON_LOG="+filepath.Join(tmp, "daemon.log"), "HARNESS_DIR="+tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A block that fails under -e leaves its jobs running, holding the
	// output pipes: report it rather than wait for them.
	cmd.WaitDelay = 10 * time.Second
	var out, errb testutil.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // whatever is left
	if err := cmd.Wait(); err != nil {
		log, _ := os.ReadFile(filepath.Join(tmp, "daemon.log"))
		t.Fatalf("%s:%d failed: %v\nstdout:\n%s\nstderr:\n%s\ndaemon:\n%s", block.File, block.Line, err, out.String(), errb.String(), testutil.Tail(string(log), 30))
	}
	return out.String(), errb.String()
}

// The README's ARM block: libarm and the SDK's sample build, the sample
// says where libarm looks (this run directory), and get reads its count.
func TestReadmeARMBlockRunsAsWritten(t *testing.T) {
	out, stderr := besideDaemon(t, "## Application response times: ARM 2.0")
	if !regexp.MustCompile(`(?m)^RTime/ARM/ARMsampleprogram/Sample_transaction/count\s+\d+\s`).MatchString(out) {
		t.Errorf("no count of the sample's transactions:\n%s\n%s", out, stderr)
	}
	if !regexp.MustCompile(`arm-sample: libarm looks for the subagent daemon at /\S+/run/arm.sock`).MatchString(stderr) {
		t.Errorf("the sample does not say where libarm looks:\n%s", stderr)
	}
}

// The README's RTime/LAN block: hosts created by reference, the one not
// measured yet read as such (not a failure), IPv6 in brackets.
func TestReadmeRTimeLANBlockRunsAsWritten(t *testing.T) {
	out, stderr := besideDaemon(t, "## Network response time: RTime/LAN")
	if !strings.Contains(out, "RTime/LAN/gw.example.org/respavg") || !strings.Contains(out+stderr, "not measured yet") {
		t.Errorf("get of a host just created:\n%s\n%s", out, stderr)
	}
}

// The README's first look at the data, every line as printed: peek and
// get ask the daemon, and snmpwalk walks its responder on 127.0.0.1:1161.
func TestReadmeLookingBlockRunsAsWritten(t *testing.T) {
	out, stderr := besideDaemonOn(t, docexamples.Get(t, "README.md", "## Looking at the data", 1), "127.0.0.1:1161", nil)
	for _, want := range []string{"Agent/", "CPU/cpu0/idle", "Proc/runque", "Disk/"} {
		if !strings.Contains(out, want) {
			t.Errorf("the block's output lacks %q\nstderr:\n%s\nstdout tail:\n%s", want, stderr, testutil.Tail(out, 5))
		}
	}
	// CPU/cpu0/idle in snmpwalk's output, named with or without SNMPv2-SMI.
	if !regexp.MustCompile(`(?m)^(iso\.3\.6\.1\.4\.1|SNMPv2-SMI::enterprises)\.32473\.1\.1\.1\.4\.0 = `).MatchString(out) {
		t.Errorf("snmpwalk did not walk CPU/cpu0/idle:\n%s", testutil.Tail(out, 5))
	}
	if strings.Contains(stderr, "reading this host directly") {
		t.Errorf("a command read the host instead of asking the daemon:\n%s", stderr)
	}
}

// docs/ARM.md's first block: the library builds, a program of the
// reader's (myprog.c, here a minimal one) links with it, and the sample is
// measured and served under RTime/.
func TestARMDocBlockRunsAsWritten(t *testing.T) {
	myprog := "#include \"arm.h\"\nint main(void) { return arm_init(\"myprog\", \"*\", 0, 0, 0) < 0; }\n"
	out, stderr := besideDaemonOn(t, docexamples.Get(t, "docs/ARM.md", "## Using it", 1), "127.0.0.1:0", map[string]string{"myprog.c": myprog})
	for _, want := range []string{"RTime/ARM/ARMsampleprogram/Sample_transaction/count", "RTime/ARM/ARMsampleprogram/"} {
		if !strings.Contains(out, want) {
			t.Errorf("the block's output lacks %q:\n%s\n%s", want, out, stderr)
		}
	}
}

// docs/ARM.md's worked example of service levels: the configuration
// block is the daemon's file, the commands run beside it as printed. The
// SDK's correlated pair misses its objective: page and ticket are raised, in
// snmptrapd and SLO/serve/page, and snmptable shows the call graph's edge.
func TestARMServiceLevelsExampleRunsAsPrinted(t *testing.T) {
	const heading = "### Worked example: the SDK's correlated pair"
	conf := docexamples.Get(t, "docs/ARM.md", heading, 1).Text
	out, stderr := runBeside(t, docexamples.Get(t, "docs/ARM.md", heading, 2),
		beside{listen: "127.0.0.1:1161", files: map[string]string{"slo.yaml": conf}, daemonArgs: "--config slo.yaml"})
	for _, re := range []string{
		`(?m)^SLO/serve/total\s+10\b`, `(?m)^SLO/serve/sli\s+0(\.0+)?\b`, `(?m)^SLO/serve/burn5m\s+100(\.0+)?\b`,
		`32473\.1\.19\.0\.1\.0 = STRING: "serve"`, `32473\.1\.19\.0\.2\.0 = STRING: "page"`, `32473\.1\.19\.0\.2\.0 = STRING: "ticket"`, `32473\.1\.19\.0\.7\.0 = STRING: "100\.000"`,
		`(?m)^SLO/serve/page\s+1\b`, `CorrClient/Request\s+CorrServer/Serve\s+10\b`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("the example's output lacks %s:\n%s\nstderr:\n%s", re, out, stderr)
		}
	}
}
