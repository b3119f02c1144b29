package main

import (
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	client "github.com/perfagent/subagent/client/ddsclient"
	"github.com/perfagent/subagent/internal/snmpdtest"
)

// stateEngineID is the engine ID (hex) in the daemon's state directory:
// snmpEngineID.0, which its v3 traps are sent from.
func stateEngineID(t *testing.T, e *env) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.state, "snmp-engine"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if id, ok := strings.CutPrefix(l, "engine_id "); ok {
			return id
		}
	}
	t.Fatalf("no engine_id in the state file:\n%s", b)
	return ""
}

// engineYAML raises pumpalarm (trap 1 past 80, cleared below 50) to the
// destinations given (YAML flow maps, one a line).
func engineYAML(dests ...string) string {
	y := `hotset:
  interval: 1s
  tree_changed_interval: 0 # hotset notifications only: the log's entries are theirs
hotsets:
  - {name: pumpalarm, stat: DDS/Acme/Pumps/*/load, maxresp: 1, threshold: 80, rearm: 50, cleared: true, frequency: 5m, feed_type: none, excp_type: trap, trap_no: 1}
traps:
`
	for _, d := range dests {
		y += "  - " + d + "\n"
	}
	return y
}

// logEntry is the oid and the outcomes of the notification log's entry
// idx (NotifLog/entry/<idx>).
func logEntry(t *testing.T, e *env, idx int) (oid, outcome string) {
	t.Helper()
	p := fmt.Sprintf("NotifLog/entry/%d/", idx)
	return getText(t, e, p+"oid"), getText(t, e, p+"outcome")
}

// waitOutcome waits (bounded) until the outcome of entry idx for path
// (the destination, "v2c trap 127.0.0.1:port") satisfies ok; it returns
// that outcome.
func waitOutcome(t *testing.T, e *env, idx int, path string, ok func(string) bool) string {
	t.Helper()
	got := ""
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		_, out := logEntry(t, e, idx)
		got = ""
		for _, o := range strings.Split(out, "; ") {
			if r, found := strings.CutPrefix(o, path+": "); found {
				got = r
			}
		}
		if ok(got) {
			return got
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("log entry %d: outcome of %s %q after 20s\n%s", idx, path, got, e.daemonLog)
	return ""
}

// restartDaemon stops the daemon, starts it again with args and waits
// for the supplier to register again.
func restartDaemon(t *testing.T, e *env, sup *client.Supplier, args ...string) {
	t.Helper()
	if err := e.stop(); err != nil {
		t.Fatalf("daemon stop: %v", err)
	}
	e.start(args...)
	for deadline := time.Now().Add(30 * time.Second); getValue(t, e, "Hotset/pumpalarm/groups") != "1"; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the supplier did not register again within 30s")
		}
		sup.Check()
	}
}

// One engine per agent, with net-snmp's snmptrapd: the daemon's v3
// authPriv traps (SHA-256/AES-128) come from snmpEngineID.0 with the
// boots kept in the state directory, so snmptrapd, which has seen this
// engine at boots 7 and a late time (primed by the test, as a run before
// would have left it), takes every one across 3 restarts (boots 8 to 11)
// and refuses none as too old. A v3 inform sent just after its receiver
// restarted (a new engine) is re-sent after rediscovery and acknowledged.
func TestV3NotificationsAcrossRestarts(t *testing.T) {
	const user, auth, priv = "trapuser", "authpass123", "privpass123"
	id := "80007ed905" + hex.EncodeToString([]byte("engine-test!"))
	e := newEnv(t)
	if err := os.MkdirAll(e.state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.state, "snmp-engine"), []byte("engine_id "+id+"\nboots 7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	trapd := snmpdtest.StartTrapdWith(t, snmpdtest.TrapdOptions{Args: []string{"-Dusm"},
		Config: []string{"createUser -e 0x" + id + " " + user + " SHA-256 " + auth + " AES " + priv}})
	informConf := snmpdtest.TrapdOptions{Config: []string{"createUser " + user + " SHA-256 " + auth + " AES " + priv}}
	informd := snmpdtest.StartTrapdWith(t, informConf)

	// Prime snmptrapd: this engine at boots 7, time 100000.
	raw, _ := hex.DecodeString(id)
	g := &gosnmp.GoSNMP{Target: "127.0.0.1", Port: uint16(udpPort(t, trapd.Addr)), Version: gosnmp.Version3, Timeout: time.Second,
		SecurityModel: gosnmp.UserSecurityModel, MsgFlags: gosnmp.AuthPriv,
		SecurityParameters: &gosnmp.UsmSecurityParameters{UserName: user, AuthoritativeEngineID: string(raw),
			AuthoritativeEngineBoots: 7, AuthoritativeEngineTime: 100000,
			AuthenticationProtocol: gosnmp.SHA256, AuthenticationPassphrase: auth, PrivacyProtocol: gosnmp.AES, PrivacyPassphrase: priv}}
	if err := g.Connect(); err != nil {
		t.Fatal(err)
	}
	if _, err := g.SendTrap(gosnmp.SnmpTrap{Variables: []gosnmp.SnmpPDU{
		{Name: ".1.3.6.1.6.3.1.1.4.1.0", Type: gosnmp.ObjectIdentifier, Value: ".1.3.6.1.4.1.32473.99.0.7"}}}); err != nil {
		t.Fatal(err)
	}
	g.Conn.Close()
	if log, err := trapd.WaitFor(10*time.Second, ".1.3.6.1.4.1.32473.99.0.7"); err != nil {
		t.Fatalf("the priming trap: %v\n%s", err, log)
	}

	v3 := func(addr, more string) string {
		return "{address: " + addr + ", version: v3, user: " + user + ", auth_protocol: SHA256, auth_password: " + auth +
			", priv_protocol: AES, priv_password: " + priv + more + "}"
	}
	file := filepath.Join(t.TempDir(), "subagent.yaml")
	if err := os.WriteFile(file, []byte(engineYAML(v3(trapd.Addr, ""), v3(informd.Addr, ", inform: true, retries: 2, timeout: 1s"))), 0o600); err != nil {
		t.Fatal(err)
	}
	port := snmpdtest.FreeUDPPort(t)
	args := []string{"--config", file, "--listen", fmt.Sprintf("127.0.0.1:%d", port)}
	e.start(args...)

	// snmpEngineID.0 is the state file's, which the traps come from.
	r := &gosnmp.GoSNMP{Target: "127.0.0.1", Port: uint16(port), Community: "public", Version: gosnmp.Version2c, Timeout: time.Second, Retries: 3}
	if err := r.Connect(); err != nil {
		t.Fatal(err)
	}
	if v, err := r.Get([]string{"1.3.6.1.6.3.10.2.1.1.0"}); err != nil || len(v.Variables) != 1 || fmt.Sprintf("%x", v.Variables[0].Value) != id {
		t.Errorf("snmpEngineID.0: %v %v, want %s", v, err, id)
	}
	r.Conn.Close()

	sup, loads, _ := pumpSupplier(t, e)
	setLoads(sup, loads, 10, 10, 10)
	waitValue(t, e, "Hotset/pumpalarm/groups", "1", 15*time.Second)
	const raised, cleared = ".1.3.6.1.4.1.32473.1.0.1\t", ".1.3.6.1.4.1.32473.1.0.32768\t"
	for round := 1; round <= 4; round++ { // the first start and 3 restarts
		if round > 1 {
			restartDaemon(t, e, sup, args...)
		}
		setLoads(sup, loads, 90, 10, 10)
		waitCount(t, trapd, raised, round, 20*time.Second)
		if round == 1 {
			// The inform receiver restarts with a new engine; the next
			// inform (the cleared one) is acknowledged all the same.
			waitCount(t, informd, raised, 1, 20*time.Second)
			informd.Stop()
			informConf.Addr = informd.Addr
			informd = snmpdtest.StartTrapdWith(t, informConf)
		}
		if round > 1 {
			waitCount(t, informd, raised, round-1, 20*time.Second) // the restarted receiver's count
		}
		setLoads(sup, loads, 10, 10, 10)
		waitCount(t, trapd, cleared, round, 20*time.Second)
		waitCount(t, informd, cleared, round, 20*time.Second)
		if round == 1 {
			next, _ := strconv.Atoi(getValue(t, e, "NotifLog/next"))
			if oid, _ := logEntry(t, e, next-1); !strings.HasSuffix(oid, ".0.32768") {
				t.Fatalf("the last log entry is %s, want the cleared notification", oid)
			}
			waitOutcome(t, e, next-1, "v3 inform "+informd.Addr, func(o string) bool { return o == "acknowledged" || strings.HasPrefix(o, "failed") })
			if _, out := logEntry(t, e, next-1); !strings.Contains(out, "v3 inform "+informd.Addr+": acknowledged") {
				t.Errorf("the inform just after the receiver restarted: %s", out)
			}
		}
	}
	// net-snmp 5.9.3's usm debug says why it refuses a message out of
	// the time window: an earlier boots, or a time too far back.
	for _, refusal := range []string{"Message too old", "Remote boot count invalid"} {
		if n := strings.Count(trapd.Log(), refusal); n != 0 {
			t.Errorf("snmptrapd logged %q %d times", refusal, n)
		}
	}
	if !strings.Contains(trapd.Log(), "usm: Verification succeeded") {
		t.Errorf("snmptrapd's usm debug is not in its log: the refusals above are not seen")
	}
}

// udpPort is the port of host:port.
func udpPort(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A v2c trap receiver that is stopped for every other notification: each
// trap sent while it is stopped is logged failed (connection refused, the
// ICMP error of that trap), each sent while it listens arrives and is
// logged "sent (unconfirmed)"; no outcome lands on another notification.
// Hotset k (trap k) has threshold 10k: load 10k+5 raises it alone (the
// others above are within their frequency).
func TestV2cOutcomesWithReceiverStopped(t *testing.T) {
	const steps = 6
	addr := snmpdtest.FreeUDPAddr(t)
	conf := "hotset:\n  interval: 1s\n  tree_changed_interval: 0\nhotsets:\n"
	for k := 1; k <= steps; k++ {
		conf += fmt.Sprintf("  - {name: step%d, stat: DDS/Acme/Pumps/*/load, maxresp: 1, threshold: %d, frequency: 5m, feed_type: none, excp_type: trap, trap_no: %d}\n", k, 10*k, k)
	}
	conf += "traps:\n  - {address: " + addr + ", version: v2c, community: public}\n"
	e := newEnv(t)
	file := filepath.Join(t.TempDir(), "subagent.yaml")
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	e.start("--config", file)
	sup, loads, _ := pumpSupplier(t, e)
	setLoads(sup, loads, 0, 0, 0)
	waitValue(t, e, fmt.Sprintf("Hotset/step%d/groups", steps), "1", 15*time.Second)
	path := "v2c trap " + addr
	first, _ := strconv.Atoi(getValue(t, e, "NotifLog/next"))
	for k := 1; k <= steps; k++ {
		idx := first + k - 1
		if k%2 == 1 { // stopped: lost
			setLoads(sup, loads, int64(10*k+5), 0, 0)
			waitOutcome(t, e, idx, path, func(o string) bool { return strings.HasPrefix(o, "failed: ") })
			continue
		}
		rx, err := net.ListenPacket("udp", addr)
		if err != nil {
			t.Fatal(err)
		}
		setLoads(sup, loads, int64(10*k+5), 0, 0)
		buf := make([]byte, 4096)
		_ = rx.SetReadDeadline(time.Now().Add(20 * time.Second))
		n, _, err := rx.ReadFrom(buf)
		rx.Close()
		if err != nil {
			t.Fatalf("trap %d did not arrive: %v", k, err)
		}
		if p, err := (&gosnmp.GoSNMP{}).SnmpDecodePacket(buf[:n]); err != nil || len(p.Variables) < 2 ||
			p.Variables[1].Value != fmt.Sprintf(".1.3.6.1.4.1.32473.1.0.%d", k) {
			t.Fatalf("got %v %v, want trap %d", p, err, k)
		}
		waitOutcome(t, e, idx, path, func(o string) bool { return o != "" })
	}
	for k := 1; k <= steps; k++ {
		idx := first + k - 1
		oid, out := logEntry(t, e, idx)
		want := path + ": failed: connection refused"
		if k%2 == 0 {
			want = path + ": sent (unconfirmed)"
		}
		if !strings.HasSuffix(oid, fmt.Sprintf(".0.%d", k)) || !strings.HasPrefix(out, want) {
			t.Errorf("log entry %d: %s %q, want trap %d with %q", idx, oid, out, k, want)
		}
	}
}
