package main

import (
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/rtimelan"
)

// rtimeConfig writes a configuration file measuring hosts every second.
func rtimeConfig(t *testing.T, file string, hosts, refuse string) string {
	t.Helper()
	body := "rtime_lan:\n  interval: 1s\n  timeout: 500ms\n  hosts: [" + hosts + "]\n  refuse: [" + refuse + "]\n"
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// rtlGet reads one statistic through the daemon; ok is false when the
// get failed.
func rtlGet(e *env, path string) (string, bool) {
	out, _, code := e.run(append([]string{"get", path}, e.args()...)...)
	f := strings.Fields(out)
	if code != 0 || len(f) < 2 || f[0] != path {
		return out, false
	}
	return f[1], true
}

func rtlWait(t *testing.T, e *env, path string, ok func(float64) bool) float64 {
	t.Helper()
	var last string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		v, good := rtlGet(e, path)
		last = v
		if f, err := strconv.ParseFloat(v, 64); good && err == nil && ok(f) {
			return f
		}
	}
	t.Fatalf("%s: last read %q\n%s", path, last, e.daemonLog)
	return 0
}

func rtlCreate(t *testing.T, e *env, cfgFile, path string) {
	t.Helper()
	if _, stderr, code := e.run(append([]string{"create", path}, e.args("--config", cfgFile)...)...); code != 0 {
		t.Fatalf("create %s: exit %d: %s", path, code, stderr)
	}
}

func rtlPeek(t *testing.T, e *env, path string) []string {
	t.Helper()
	out, stderr, code := e.run(append([]string{"peek", "--oid", "RTime/LAN/"}, e.args()...)...)
	if code != 0 {
		t.Fatalf("peek: %s", stderr)
	}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == path {
			return f
		}
	}
	return nil
}

func TestRTimeLANWithoutICMPSocketsLeavesTheDaemonRunning(t *testing.T) {
	e := newEnv(t)
	if os.Geteuid() == 0 {
		// Root opens raw ICMP sockets: its daemon runs without CAP_NET_RAW,
		// with datagram ICMP sockets as ping_group_range allows them.
		if b, err := os.ReadFile("/proc/sys/net/ipv4/ping_group_range"); err != nil || !pingGroupExcludesRoot(string(b)) {
			t.Skipf("net.ipv4.ping_group_range %q lets root's group open ICMP sockets without CAP_NET_RAW (%v)", b, err)
		}
		e.wrap = []string{"setpriv", "--inh-caps=-net_raw", "--bounding-set=-net_raw", "--"}
	} else if p, _, err := rtimelan.OpenPinger(nil); err == nil {
		p.Close()
		t.Skip("this user may open ICMP sockets; TestRTimeLANThroughGetPeekSnmpdAndMIB covers the daemon with them")
	}
	cfg := rtimeConfig(t, filepath.Join(t.TempDir(), "c.yaml"), "127.0.0.1", "")
	e.start("--config", cfg)
	if !strings.Contains(e.daemonLog.String(), "net.ipv4.ping_group_range") || !strings.Contains(e.daemonLog.String(), "CAP_NET_RAW") {
		t.Errorf("no message naming the sysctl and the capability:\n%s", e.daemonLog)
	}
	if _, ok := rtlGet(e, "CPU/cpu0/idle"); !ok {
		t.Error("the daemon does not serve CPU without RTime/LAN")
	}
}

// pingGroupExcludesRoot tells whether a ping_group_range ("1\t0": none)
// leaves out gid 0.
func pingGroupExcludesRoot(r string) bool {
	f := strings.Fields(r)
	if len(f) != 2 {
		return false
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	return err1 == nil && err2 == nil && (lo > 0 || hi < lo)
}

func TestRTimeLANThroughGetPeekSnmpdAndMIB(t *testing.T) {
	p, _, err := rtimelan.OpenPinger(nil)
	if err != nil {
		t.Skipf("no ICMP socket for this user (TestRTimeLANWithoutICMPSocketsLeavesTheDaemonRunning covers it): %v", err)
	}
	p.Close()
	s := snmpdtest.Start(t, snmpdtest.Options{})
	e := newEnv(t)
	cfgFile := filepath.Join(t.TempDir(), "c.yaml")
	rtimeConfig(t, cfgFile, "127.0.0.1", "")
	e.start("--agentx", s.AgentXAddress, "--config", cfgFile)
	waitServed(t, s, idleOID, 10*time.Second)

	// Configured host: 16, the first host number.
	rtlWait(t, e, "RTime/LAN/127.0.0.1/responses", func(f float64) bool { return f >= 2 })
	// The buckets of one reading share the replies out (a loaded machine
	// takes 10 ms on loopback too, so which bucket is not asserted).
	h := "RTime/LAN/127.0.0.1/"
	buckets := armGet(t, e, h+"below10", h+"below20", h+"below100", h+"above99")
	var pct float64
	for _, v := range buckets {
		f, _ := strconv.ParseFloat(v, 64)
		pct += f
	}
	if len(buckets) != 4 || pct < 99.9 || pct > 100.1 {
		t.Errorf("response time buckets on loopback %v add up to %v%%, want 100", buckets, pct)
	}
	if v := rtlWait(t, e, "RTime/LAN/127.0.0.1/respavg", func(float64) bool { return true }); v <= 0 || v >= 10 {
		t.Errorf("respavg on loopback = %v ms", v)
	}
	checkResptime(t, e, "127.0.0.1")
	if f := rtlPeek(t, e, "RTime/LAN/127.0.0.1/responses"); f == nil || f[1] != "13.2.16.8" {
		t.Errorf("peek: %v, want relative id 13.2.16.8", f)
	}
	vars, err := s.Get(base+".13.2.16.8.0", base+".13.2.16.3.0", base+".13.2.16.7.0", base+".13.2.1.0",
		base+".13.2.16.4.0", base+".13.2.16.5.0", base+".13.2.16.6.0")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := strconv.Atoi(vars[0].Value); n < 2 {
		t.Errorf("snmpget responses: %v", vars[0])
	}
	// Percent with two decimals: the buckets add up to 10000 (±1 each).
	sum := 0
	for _, i := range []int{1, 4, 5, 6} {
		n, _ := strconv.Atoi(vars[i].Value)
		sum += n
	}
	if len(vars) != 7 || sum < 9996 || sum > 10004 {
		t.Errorf("snmpget below10, below20, below100, above99: %v, want 10000 together", vars)
	}
	if vars[3].Value != "1" {
		t.Errorf("snmpget RTime/LAN/hosts: %v, want 1", vars[3])
	}

	// The MIB names the objects.
	_, text, _, stderr, code := runMIB(t, e, "SUBAGENT-MIB")
	if code != 0 {
		t.Fatalf("subagent mib: %s", stderr)
	}
	for _, name := range []string{"rTimeLAN", "rTimeLANForeign", "rTimeLANTable", "rTimeLANName", "rTimeLANResptime", "rTimeLANRespavg", "rTimeLANAbove99", "rTimeLANResponses"} {
		if !regexp.MustCompile(`(?m)^` + name + ` OBJECT-(TYPE|IDENTITY)$`).MatchString(text) {
			t.Errorf("the MIB does not declare %s", name)
		}
	}

	// A read creates nothing; create does, and the host gets the next number.
	if _, ok := rtlGet(e, "RTime/LAN/127.0.0.2/requests"); ok {
		t.Fatal("a get created RTime/LAN/127.0.0.2")
	}
	if f := rtlPeek(t, e, "RTime/LAN/127.0.0.2/"); f != nil {
		t.Fatalf("a get created RTime/LAN/127.0.0.2: %v", f)
	}
	rtlCreate(t, e, cfgFile, "RTime/LAN/127.0.0.2")
	rtlWait(t, e, "RTime/LAN/127.0.0.2/requests", func(float64) bool { return true })
	f := rtlPeek(t, e, "RTime/LAN/127.0.0.2/responses")
	if f == nil || f[1] != "13.2.17.8" {
		t.Fatalf("created host: %v, want 13.2.17.8", f)
	}
	rtlWait(t, e, "RTime/LAN/127.0.0.2/responses", func(f float64) bool { return f >= 1 })
	if _, stderr, code := e.run(append([]string{"create", "RTime/LAN/bad!host"}, e.args("--config", cfgFile)...)...); code == 0 || !strings.Contains(stderr, "bad!host") {
		t.Errorf("create of a host name with '!': exit %d, %q", code, stderr)
	}

	// After a restart the created host is there with the same OID.
	if err := e.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	e.start("--agentx", s.AgentXAddress, "--config", cfgFile)
	if f := rtlPeek(t, e, "RTime/LAN/127.0.0.2/responses"); f == nil || f[2] != base+".13.2.17.8.0" {
		t.Fatalf("after a restart: %v, want %s.13.2.17.8.0", f, base)
	}
	waitServed(t, s, base+".13.2.17.7.0", 10*time.Second)

	// SIGHUP: a new configured host appears, the refused one goes.
	rtimeConfig(t, cfgFile, "127.0.0.1, 127.0.0.3", "127.0.0.2")
	e.daemon.Process.Signal(syscall.SIGHUP)
	rtlWait(t, e, "RTime/LAN/127.0.0.3/responses", func(f float64) bool { return f >= 1 })
	if f := rtlPeek(t, e, "RTime/LAN/127.0.0.3/"); f == nil || f[1] != "13.2.18" {
		t.Errorf("host added by reload: %v, want 13.2.18", f)
	}
	if f := rtlPeek(t, e, "RTime/LAN/127.0.0.2/"); f != nil {
		t.Errorf("refused host still served: %v", f)
	}
	if _, stderr, code := e.run(append([]string{"create", "RTime/LAN/127.0.0.2"}, e.args("--config", cfgFile)...)...); code == 0 || !strings.Contains(stderr, "rtime_lan.refuse") {
		t.Errorf("create of a refused host: exit %d, %q; want a refusal naming rtime_lan.refuse", code, stderr)
	}

	// subagent delete removes a host created by reference, for good;
	// configured hosts and other contexts are refused with a reason.
	rtlCreate(t, e, cfgFile, "RTime/LAN/127.0.0.4")
	if _, stderr, code := e.run(append([]string{"delete", "RTime/LAN/127.0.0.4"}, e.args("--config", cfgFile)...)...); code != 0 {
		t.Fatalf("delete: %s", stderr)
	}
	if f := rtlPeek(t, e, "RTime/LAN/127.0.0.4/"); f != nil {
		t.Errorf("deleted host still served: %v", f)
	}
	for path, want := range map[string]string{"RTime/LAN/127.0.0.1": "rtime_lan.hosts", "CPU/cpu0": "not a context that can be deleted", "RTime/LAN/127.0.0.9": "no host"} {
		if _, stderr, code := e.run(append([]string{"delete", path}, e.args("--config", cfgFile)...)...); code == 0 || !strings.Contains(stderr, want) {
			t.Errorf("delete %s: exit %d, %q; want a refusal saying %q", path, code, stderr, want)
		}
	}
	if err := e.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	e.start("--agentx", s.AgentXAddress, "--config", cfgFile)
	if f := rtlPeek(t, e, "RTime/LAN/127.0.0.4/"); f != nil {
		t.Errorf("a deleted host came back after a restart: %v", f)
	}
}

// checkResptime reads host's resptime: milliseconds with 3 decimals,
// above 0 on loopback (whole milliseconds read 0 there).
func checkResptime(t *testing.T, e *env, host string) {
	t.Helper()
	v, ok := rtlGet(e, "RTime/LAN/"+host+"/resptime")
	if f, err := strconv.ParseFloat(v, 64); !ok || err != nil || f <= 0 || f >= 500 || !regexp.MustCompile(`^\d+\.\d{3}$`).MatchString(v) {
		t.Errorf("RTime/LAN/%s/resptime = %q, want milliseconds with 3 decimals, above 0 and below the 500 ms timeout", host, v)
	}
}

// pingers opens ICMP sockets of both families for the test, which is
// skipped, saying why, where this user may not have them.
func pingers(t *testing.T) *rtimelan.Pinger {
	t.Helper()
	p, v6err, err := rtimelan.OpenPinger(nil)
	if err != nil {
		t.Skipf("no ICMP socket for this user: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	if v6err != nil || p.V6 == nil {
		t.Skipf("no IPv6 ICMP socket: %v", v6err)
	}
	return p
}

// An IPv6 host is one instance however it is typed (::1, [::1]), in the
// configuration, in get and in create; resptime on loopback has
// sub-millisecond resolution; a host created a moment ago reads "not
// measured yet" without failing.
func TestRTimeLANIPv6SpellingsResolutionAndFirstRead(t *testing.T) {
	pingers(t)
	e := newEnv(t)
	cfgFile := filepath.Join(t.TempDir(), "c.yaml")
	// One cycle at the start, the next in an hour: a host created later
	// is not measured during the test.
	body := "rtime_lan:\n  interval: 1h\n  timeout: 500ms\n  hosts: [\"[::1]\"]\n"
	if err := os.WriteFile(cfgFile, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	e.start("--config", cfgFile)
	rtlWait(t, e, "RTime/LAN/::1/responses", func(f float64) bool { return f >= 1 })
	checkResptime(t, e, "::1")

	// Both spellings in one get: the same statistic, printed canonical.
	out, stderr, code := e.run(append([]string{"get", "RTime/LAN/[::1]/resptime", "RTime/LAN/::1/resptime", "/RTime/LAN/0:0::1/requests"}, e.args()...)...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 {
		t.Fatalf("get of [::1] and ::1: exit %d\n%s%s", code, out, stderr)
	}
	a, b := strings.Fields(lines[0]), strings.Fields(lines[1])
	if a[0] != "RTime/LAN/::1/resptime" || b[0] != a[0] || a[1] != b[1] {
		t.Errorf("[::1] and ::1 read apart:\n%s", out)
	}
	if f := strings.Fields(lines[2]); f[0] != "RTime/LAN/::1/requests" {
		t.Errorf("0:0::1 not read as ::1:\n%s", out)
	}
	// Creating it again under the other spelling adds nothing.
	rtlCreate(t, e, cfgFile, "RTime/LAN/[::1]")
	rtlCreate(t, e, cfgFile, "RTime/LAN/::1")
	if v, _ := rtlGet(e, "RTime/LAN/hosts"); v != "1" {
		t.Errorf("RTime/LAN/hosts = %q after creating ::1 twice more, want 1", v)
	}
	out, _, _ = e.run(append([]string{"peek", "RTime/LAN/"}, e.args()...)...)
	if strings.Contains(out, "[") || strings.Count(out, "RTime/LAN/::1/ ") != 1 {
		t.Errorf("peek RTime/LAN/: want one instance ::1:\n%s", out)
	}
	if f := rtlPeek(t, e, "RTime/LAN/::1/resptime"); f == nil {
		t.Error("peek RTime/LAN/[::1]/ finds nothing")
	}

	// The first read of a new host: no value yet, said so, exit 0.
	rtlCreate(t, e, cfgFile, "RTime/LAN/[::ffff:127.0.0.2]")
	out, stderr, code = e.run(append([]string{"get", "RTime/LAN/127.0.0.2/resptime", "RTime/LAN/127.0.0.2/respavg", "RTime/LAN/127.0.0.2/requests"}, e.args()...)...)
	if code != 0 || strings.Count(out, "not measured yet") != 2 || strings.Contains(out+stderr, "could not be read") {
		t.Errorf("first read of a new host: exit %d\n%s%s", code, out, stderr)
	}
	if f := strings.Fields(out); len(f) < 2 || f[0] != "RTime/LAN/127.0.0.2/resptime" || f[1] != "-" {
		t.Errorf("first read: want the path and -:\n%s", out)
	}
	// A real failure beside it still fails.
	if _, _, code := e.run(append([]string{"get", "RTime/LAN/127.0.0.2/resptime", "RTime/LAN/nosuch/resptime"}, e.args()...)...); code == 0 {
		t.Error("an unknown host read with a new one: exit 0")
	}
}

// Another program pinging loopback with its own identifier is not counted
// as foreign, although a raw socket of the daemon sees its replies.
func TestRTimeLANIgnoresAnotherProgramsPings(t *testing.T) {
	p := pingers(t)
	e := newEnv(t)
	e.start("--config", rtimeConfig(t, filepath.Join(t.TempDir(), "c.yaml"), `"127.0.0.1", "[::1]"`, ""))
	for _, s := range []*rtimelan.Socket{p.V4, p.V6} {
		s.ID ^= 0x5a5a
	}
	got := make(chan struct{}, 100)
	go p.Receive(func(bool, []byte, netip.Addr, time.Time) { got <- struct{}{} })
	for seq := range uint16(5) {
		p.Send(netip.MustParseAddr("127.0.0.1"), seq, []byte("another program"))
		p.Send(netip.MustParseAddr("::1"), seq, []byte("another program"))
	}
	for range 10 {
		select {
		case <-got:
		case <-time.After(5 * time.Second):
			t.Fatal("the other program's pings got no replies")
		}
	}
	// The daemon's raw sockets got those replies before the reply to any
	// echo it sends from now on: once such a reply is counted for each
	// family, the other program's replies have been read too.
	for _, h := range []string{"127.0.0.1", "::1"} {
		sent, _ := rtlGet(e, "RTime/LAN/"+h+"/requests")
		n, err := strconv.ParseFloat(sent, 64)
		if err != nil {
			t.Fatalf("RTime/LAN/%s/requests = %q", h, sent)
		}
		rtlWait(t, e, "RTime/LAN/"+h+"/responses", func(r float64) bool { return r > n })
	}
	if v, ok := rtlGet(e, "RTime/LAN/foreign"); !ok || v != "0" {
		t.Errorf("RTime/LAN/foreign = %q after another program's pings, want 0", v)
	}
}
