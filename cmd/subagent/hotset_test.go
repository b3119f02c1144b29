package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/dds/client"
	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/mib/mibtest"
	"github.com/perfagent/subagent/traps"
)

// pumpSupplier registers DDS/Acme/Pumps with three peers p1..p3, each
// with a load gauge whose value the test sets.
func pumpSupplier(t *testing.T, e *env) (*client.Supplier, []*client.Gauge) {
	t.Helper()
	v := client.NewVendor("Acme", "Acme pumping stations", 7)
	pumps := v.Context("Pumps", "The pumps of the station", 1)
	var loads []*client.Gauge
	for i := 1; i <= 3; i++ {
		p := pumps.Context(fmt.Sprintf("p%d", i), "Pump", uint32(i))
		loads = append(loads, p.Gauge("load", "Load of the pump", 1, client.Range(0, 100)))
	}
	s, err := client.Start(v, filepath.Join(t.TempDir(), "pumps.shm"), &client.Options{Socket: filepath.Join(e.runDir, "dds.sock")})
	if err != nil {
		t.Fatalf("supplier: %v", err)
	}
	// Stamp SiShT as a live supplier does, or the daemon drops it after
	// stamp_timeout.
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				s.Stamp()
			}
		}
	}()
	t.Cleanup(func() { close(done); <-stopped; s.Exit() }) // no Stamp once Exit begins
	return s, loads
}

func setLoads(s *client.Supplier, g []*client.Gauge, vals ...int64) {
	s.Update(func() {
		for i, v := range vals {
			g[i].Set(v)
		}
	})
}

// getValue reads one statistic from the running daemon (subagent get).
func getValue(t *testing.T, e *env, path string) string {
	t.Helper()
	out, stderr, code := e.run(append([]string{"get", path}, e.args()...)...)
	if code != 0 {
		return "error: " + stderr
	}
	f := strings.Fields(strings.TrimSpace(out))
	if len(f) < 2 {
		return ""
	}
	return f[1]
}

func waitValue(t *testing.T, e *env, path, want string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	got := ""
	for time.Now().Before(deadline) {
		if got = getValue(t, e, path); got == want {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s = %q after %v, want %q\n%s", path, got, within, want, e.daemonLog)
}

const hotsetYAML = `hotset:
  interval: 1s
hotsets:
  - name: hotpumps
    stat: DDS/Acme/Pumps/*/load
    maxresp: 2
    threshold: 80
    frequency: 5m
    feed_type: threshold
    excp_type: both
    severity: 3
    trap_no: 21
`

// A threshold crossing driven by a supplier reaches snmptrapd through the
// master's AgentX Notify (as an SNMPv2c trap and an SNMPv3 authPriv
// inform of the master) and directly in SNMPv1, v2c, v2c inform and v3
// authPriv; with the module the daemon describes, snmptrapd prints the
// notification and its objects by name. A refusing destination is
// counted and blocks nothing.
func TestHotsetTrapsEndToEnd(t *testing.T) {
	mibtest.Require(t, "snmptranslate", "smilint")
	const user, auth, priv = "hotuser", "authpass123", "privpass123"
	engine := traps.EngineID("e2e-hotset")
	addrs := map[string]string{}
	for _, k := range []string{"master", "masterv3", "v1", "v2c", "inform", "v3"} {
		addrs[k] = snmpdtest.FreeUDPAddr(t)
	}
	refused := snmpdtest.FreeUDPAddr(t) // nobody listens there
	// The master delivers with its own sinks: trap2sink, and an SNMPv3
	// authPriv inform session.
	s := snmpdtest.Start(t, snmpdtest.Options{TrapSink: addrs["master"], ExtraConfig: []string{
		"trapsess -Ci -r 2 -t 1 -v 3 -u " + user + " -l authPriv -a SHA -A " + auth + " -x AES -X " + priv + " udp:" + addrs["masterv3"]}})
	e := newEnv(t)
	conf := hotsetYAML + `traps:
  - {address: ` + addrs["v1"] + `, version: v1, community: public}
  - {address: ` + addrs["v2c"] + `, version: v2c, community: public}
  - {address: ` + addrs["inform"] + `, version: v2c, community: public, inform: true, retries: 2, timeout: 1s}
  - {address: ` + addrs["v3"] + `, version: v3, user: ` + user + `, auth_protocol: SHA, auth_password: ` + auth +
		`, priv_protocol: AES, priv_password: ` + priv + `, engine_id: "` + engine + `"}
  - {address: ` + refused + `, version: v2c, community: public, inform: true, retries: 0, timeout: 300ms}
`
	file := filepath.Join(t.TempDir(), "subagent.yaml")
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	e.start("--config", file, "--agentx", s.AgentXAddress)
	waitServed(t, s, idleOID, 10*time.Second)
	sup, loads := pumpSupplier(t, e)
	setLoads(sup, loads, 10, 20, 30)
	waitValue(t, e, "Hotset/hotpumps/groups", "1", 10*time.Second)
	if v := getValue(t, e, "Hotset/hotpumps/count"); v != "0" {
		t.Fatalf("below the threshold the feed has %s rows", v)
	}

	module, text, _, stderr, code := runMIB(t, e, "SUBAGENT-MIB")
	if code != 0 || !strings.Contains(text, "hotsetTrap21 NOTIFICATION-TYPE") {
		t.Fatalf("subagent mib (%s) declares no hotsetTrap21:\n%s", stderr, grepLines(text, "hotsetTrap"))
	}
	dirs := append(mibtest.BaseDirs(t), filepath.Dir(module))
	mibtest.LintClean(t, module, dirs)
	trapd := map[string]*snmpdtest.Trapd{}
	for k, a := range addrs {
		trapd[k] = snmpdtest.StartTrapdWith(t, snmpdtest.TrapdOptions{Addr: a, MIBDirs: dirs, Modules: []string{"SUBAGENT-MIB"},
			Config: []string{
				"createUser -e 0x" + engine + " " + user + " SHA " + auth + " AES " + priv, // v3 traps from the daemon
				"createUser " + user + " SHA " + auth + " AES " + priv,                     // v3 informs from the master
			}})
	}

	start := time.Now()
	setLoads(sup, loads, 85, 95, 50) // p2 and p1 cross, hottest first
	for k, d := range trapd {
		want := []string{"SUBAGENT-MIB::hotsetName.0", "hotpumps", "SUBAGENT-MIB::hotsetPeerContext.0", "DDS/Acme/Pumps/",
			"SUBAGENT-MIB::hotsetThreshold.0 = INTEGER: 80", "SUBAGENT-MIB::hotsetSeverity.0 = INTEGER: 3",
			"SUBAGENT-MIB::ddsAcmePumpsP2Load.0 = Counter64: 95", "SUBAGENT-MIB::ddsAcmePumpsP1Load.0 = Counter64: 85"}
		if k == "v1" {
			want = append(want, "TRAP, SNMP v1", "SUBAGENT-MIB::subagentMIB Enterprise Specific Trap (SUBAGENT-MIB::hotsetTrap21)")
		} else {
			want = append(want, "OID: SUBAGENT-MIB::hotsetTrap21")
		}
		log, err := d.WaitFor(15*time.Second, want...)
		if err != nil {
			t.Errorf("%s: %v\n%s", k, err, log)
			continue
		}
		if strings.Contains(log, "P3Load") {
			t.Errorf("%s: the quiet peer was sent:\n%s", k, log)
		}
		if i, j := strings.Index(log, "P2Load"), strings.Index(log, "P1Load"); i > j {
			t.Errorf("%s: the hottest peer is not first:\n%s", k, log)
		}
	}
	t.Logf("notifications arrived %v after the crossing", time.Since(start))

	// The feed table answers through snmpd which pumps are hottest.
	vars, err := s.Walk(base + ".14")
	if err != nil {
		t.Fatal(err)
	}
	var feed []string
	for _, v := range vars {
		feed = append(feed, v.Value)
	}
	if all := strings.Join(feed, " "); !strings.Contains(all, "p2 9500 ") || !strings.Contains(all, "p1 8500 ") {
		t.Errorf("the walk of Hotset lacks the feed rows p2 95.00, p1 85.00: %s", all)
	}
	if v := getValue(t, e, "Hotset/hotpumps/excp/1/peers"); v != "p2=95" {
		t.Errorf("exceptions table: %q", v)
	}
	if !strings.Contains(e.daemonLog.String(), "hotset exception") || !strings.Contains(e.daemonLog.String(), "severity=3") {
		t.Errorf("no exception logged with its severity:\n%s", e.daemonLog)
	}
	waitValue(t, e, "Agent/traps/sent", "4", 10*time.Second)
	waitValue(t, e, "Agent/traps/failed", "1", 10*time.Second)
	waitValue(t, e, "Agent/traps/down", "1", 10*time.Second)
	waitValue(t, e, "Agent/traps/mastersent", "1", 10*time.Second)
	// Evaluation went on while the refusing destination failed.
	setLoads(sup, loads, 99, 10, 10)
	waitValue(t, e, "Hotset/hotpumps/feed/1/name", "p1", 10*time.Second)
	if n := strings.Count(e.daemonLog.String(), "trap destination failing"); n != 1 {
		t.Errorf("the failing destination was logged %d times", n)
	}
}

// SIGHUP reloads the hotsets; a bad file keeps the running set and the
// log says why.
func TestHotsetReloadOnHangup(t *testing.T) {
	e := newEnv(t)
	file := filepath.Join(t.TempDir(), "subagent.yaml")
	write := func(yaml string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	queues := "hotset:\n  interval: 1s\nhotsets:\n  - {name: queues, stat: Disk/*/qlen, maxresp: 2, feed_type: always}\n"
	write(queues)
	e.start("--config", file)
	waitValue(t, e, "Hotset/queues/maxresp", "2", 10*time.Second)
	waitValue(t, e, "Hotset/queues/count", "2", 10*time.Second)

	write("hotsets:\n  - {name: queues, stat: Disk/*/qlen, maxresp: 0, threshold: 5, excp_type: trap, trap_no: 4, frequency: 5m, feed_type: always}\n")
	if err := e.daemon.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(e.daemonLog.String(), "reload refused") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if log := e.daemonLog.String(); !strings.Contains(log, "reload refused") || !strings.Contains(log, "hotsets[0]") || !strings.Contains(log, "maxresp") {
		t.Fatalf("a bad reload was not refused naming hotsets[0] and maxresp:\n%s", log)
	}
	if v := getValue(t, e, "Hotset/queues/maxresp"); v != "2" {
		t.Errorf("after a refused reload maxresp is %s", v)
	}

	write(strings.Replace(queues, "maxresp: 2", "maxresp: 1", 1) + "  - {name: sizes, stat: FS/*/size, maxresp: 1, feed_type: always}\n")
	if err := e.daemon.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitValue(t, e, "Hotset/queues/count", "1", 10*time.Second)
	waitValue(t, e, "Hotset/sizes/count", "1", 10*time.Second)
}
