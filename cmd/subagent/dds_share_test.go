package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
)

// otherUser is a second allowed user besides nobody, in nobody's group.
const otherUser = 65533

// ddsloadBin builds samples/ddsload where every user can run it.
func ddsloadBin(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	testutil.Traversable(t, dir)
	bin := filepath.Join(dir, "ddsload")
	if out, err := exec.Command("go", "build", "-o", bin, "../../samples/ddsload").CombinedOutput(); err != nil {
		t.Fatalf("go build ddsload: %v\n%s", err, out)
	}
	return bin
}

// ddsloadAs runs ddsload as uid (in group 65534, without supplementary
// groups) against the daemon, its shared files in a directory of that
// user's. It returns "" once the suppliers are registered (the process
// keeps them until the test ends), else what ddsload said on failing.
func (e *env) ddsloadAs(t *testing.T, bin string, uid int, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	testutil.Traversable(t, dir)
	if err := os.Chown(dir, uid, testutil.Nobody); err != nil {
		t.Fatal(err)
	}
	args = append(args, "-dir", dir)
	cmd := exec.Command(bin, args...)
	if uid != 0 {
		cmd = exec.Command("setpriv", append([]string{"--reuid=" + strconv.Itoa(uid), "--regid=" + strconv.Itoa(testutil.Nobody),
			"--clear-groups", "--", bin}, args...)...)
	}
	cmd.Env = append(os.Environ(), "SUBAGENT_RUN_DIR="+e.runDir, "SUBAGENT_DDS_SOCKET=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.Contains(line, "registered") {
		return ""
	}
	cmd.Wait()
	if stderr.Len() == 0 {
		t.Fatalf("ddsload as uid %d %v: neither registered nor an error (%q)", uid, args, line)
	}
	return stderr.String()
}

// Every local user gets a bounded share (issue 26): an allowed user
// other than root registering 62,500 statistics, a quarter of
// dds.max_stats_all, gets no more (its next supplier is refused naming
// dds.max_stats_per_uid); root's supplier and another user's still
// register and are served. A vendor name reserved for root in dds.reserve
// is refused to that user even though nobody uses it yet, and root gets
// it. Meanwhile SNMP GETs to the standalone responder keep being answered
// promptly.
func TestEachLocalUserGetsABoundedDDSShare(t *testing.T) {
	testutil.RequireRoot(t)
	e := newEnv(t)
	if err := os.MkdirAll(e.runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	testutil.Traversable(t, e.runDir)
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`dds:
  group: %d
  allow_uids: [%d, %d]
  reserve:
    - context: DDS/RootVendor
      asn: 9003
`, testutil.Nobody, testutil.Nobody, otherUser)), 0o644)
	m, args := startManagers(t)
	e.start(append([]string{"--config", cfg}, args...)...)
	bin := ddsloadBin(t)
	const oid = base + ".1.1.4.0" // CPU/cpu0/idle
	m.attach(t, oid)
	q50, q99 := quietGets(t, m.standalone, oid, 1000)
	gets := m.sample(t, oid)
	var figures string
	stopGets := sync.OnceFunc(func() { figures = gets.end(t, "the registrations") })
	defer stopGets()

	// Nobody takes root's vendor name first: refused, though unused.
	msg := e.ddsloadAs(t, bin, testutil.Nobody, "-vendor", "RootVendor", "-asn", "9003", "-suppliers", "1", "-stats", "1")
	for _, want := range []string{"SiDuplicate", "context DDS/RootVendor is reserved for root and the daemon's own user (dds.reserve[0])", "uid 65534 may not register it"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("nobody registering root's reserved vendor: %q lacks %q", msg, want)
		}
	}
	// Nobody fills its share with one supplier of 62,500 statistics.
	if msg := e.ddsloadAs(t, bin, testutil.Nobody, "-vendor", "NobodyLoad", "-asn", "9001", "-suppliers", "1", "-stats", "62500"); msg != "" {
		t.Fatalf("nobody's supplier within its share: %s", msg)
	}
	msg = e.ddsloadAs(t, bin, testutil.Nobody, "-vendor", "NobodyMore", "-asn", "9002", "-suppliers", "1", "-stats", "10")
	for _, want := range []string{"SiCallocFailed", "the suppliers of uid 65534 hold 62500 statistics", "share of one user, 62500 (dds.max_stats_per_uid)"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("nobody's supplier beyond its share: %q lacks %q", msg, want)
		}
	}
	// The operator learns of it too, once.
	if log := e.daemonLog.String(); strings.Count(log, "dds: registration refused") != 2 || !strings.Contains(log, "dds.max_stats_per_uid") {
		t.Errorf("the daemon's log does not tell the two refusals (reserved name, share) once each:\n%s", log)
	}
	if msg := e.ddsloadAs(t, bin, 0, "-vendor", "RootVendor", "-asn", "9003", "-suppliers", "1", "-stats", "10"); msg != "" {
		t.Fatalf("root's supplier beside nobody's full share: %s", msg)
	}
	if msg := e.ddsloadAs(t, bin, otherUser, "-vendor", "OtherLoad", "-asn", "9004", "-suppliers", "1", "-stats", "1000"); msg != "" {
		t.Fatalf("another user's supplier beside nobody's full share: %s", msg)
	}
	stopGets()
	for _, p := range []string{"DDS/RootVendor/s1/v10", "DDS/OtherLoad/s1/v1000", "DDS/NobodyLoad/s1/c63/v62500"} {
		testutil.Eventually(t, p+" to be served", 10*time.Second, func() bool {
			out, _, code := e.run(append([]string{"get", p}, e.args()...)...)
			return code == 0 && strings.HasPrefix(out, p)
		})
	}

	t.Logf("GETs before: p50 %v, p99 %v; while nobody filled its share: %s", q50, q99, figures)
}

// Wrong shares and reservations stop the daemon before it starts,
// naming the setting.
func TestBadDDSSharesAreRefused(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct{ yaml, want string }{
		{"dds:\n  max_stats_all: 1000\n  max_stats_per_uid: 1001\n", "dds.max_stats_per_uid: 1001 is not from 0 (a quarter of dds.max_stats_all) to dds.max_stats_all (1000)"},
		{"dds:\n  max_suppliers_per_uid: -1\n", "dds.max_suppliers_per_uid: -1"},
		{"dds:\n  reserve:\n    - context: RootVendor\n", `dds.reserve[0].context: context path "RootVendor" is not under DDS/<vendor>`},
		{"dds:\n  reserve:\n    - context: DDS/A/B\n      asn: 5\n", "dds.reserve[0].asn: DDS/A/B is not a vendor context"},
		{"dds:\n  reserve:\n    - context: DDS/A\n      uids: [-1]\n", "dds.reserve[0].uids: -1 is not a user or group id"},
		{"dds:\n  reserve:\n    - context: DDS/A\n      user: 5\n", "unknown key dds.reserve[0].user"},
	} {
		cfg := filepath.Join(t.TempDir(), "c.yaml")
		os.WriteFile(cfg, []byte(tc.yaml), 0o644)
		_, stderr, code := e.run(append([]string{"run", "--config", cfg, "--listen", "none"}, e.args()...)...)
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr lacks %q:\n%s", tc.yaml, code, tc.want, stderr)
		}
	}
}
