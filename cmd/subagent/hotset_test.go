package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	client "github.com/perfagent/subagent/client/ddsclient"
	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/mib/mibtest"
)

// pumpSupplier registers DDS/Acme/Pumps with three peers p1..p3, each
// with a load gauge and a flow counter whose values the test sets.
func pumpSupplier(t *testing.T, e *env) (*client.Supplier, []*client.Gauge, []*client.Counter) {
	t.Helper()
	v := client.NewVendor("Acme", "Acme pumping stations", 7)
	pumps := v.Context("Pumps", "The pumps of the station", 1)
	var loads []*client.Gauge
	var flows []*client.Counter
	for i := 1; i <= 3; i++ {
		p := pumps.Context(fmt.Sprintf("p%d", i), "Pump", uint32(i))
		loads = append(loads, p.Gauge("load", "Load of the pump", 1, client.Range(0, 100)))
		flows = append(flows, p.Counter("flow", "Litres pumped", 2, client.Range(0, 10000)))
	}
	s, err := client.Start(v, filepath.Join(t.TempDir(), "pumps.shm"), &client.Options{Socket: filepath.Join(e.runDir, "dds.sock")})
	if err != nil {
		t.Fatalf("supplier: %v", err)
	}
	// Stamp SiShT as a live supplier does, or the daemon drops it after
	// stamp_timeout.
	stampEverySecond(t, s.Stamp, func() { s.Exit() })
	return s, loads, flows
}

// stampEverySecond calls stamp every second, as live suppliers stamp
// SiShT, until the test ends; then exit, once no stamp is under way (no
// Stamp once Exit begins).
func stampEverySecond(t *testing.T, stamp, exit func()) { every(t, time.Second, stamp, exit) }

// every calls f every period until the test ends; then exit, once no f
// is under way.
func every(t *testing.T, period time.Duration, f, exit func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				f()
			}
		}
	}()
	t.Cleanup(func() { close(done); <-stopped; exit() })
}

func setLoads(s *client.Supplier, g []*client.Gauge, vals ...int64) {
	s.Update(func() {
		for i, v := range vals {
			g[i].Set(v)
		}
	})
}

// getValue reads one statistic from the running daemon (subagent get):
// its first word.
func getValue(t *testing.T, e *env, path string) string {
	t.Helper()
	f := strings.Fields(getText(t, e, path))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// getText is the whole value subagent get prints for path (a text
// statistic may hold spaces).
func getText(t *testing.T, e *env, path string) string {
	t.Helper()
	out, stderr, code := e.run(append([]string{"get", path}, e.args()...)...)
	if code != 0 {
		return "error: " + stderr
	}
	// Columns are aligned with two spaces at least; a text holds single ones.
	f := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(out), -1)
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
  tree_changed_interval: 0 # the tests count hotset notifications only
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

// hotflowYAML is added by a reload, once the counters stand far from 0.
const hotflowYAML = `  - name: hotflow
    stat: DDS/Acme/Pumps/*/flow
    maxresp: 2
    threshold: 1000
    frequency: 5m
    feed_type: threshold
    excp_type: both
    severity: 4
    trap_no: 22
`

// hotsetObjects are the objects of the hotset notifications in the order
// of their OBJECTS clause.
var hotsetObjects = []string{"hotsetName", "hotsetPeerContext", "hotsetThreshold", "hotsetSeverity",
	"hotsetPeerName", "hotsetPeerValue", "hotsetValueUnits", "hotsetPeerList", "hotsetSuppressed"}

// vbValue is the value snmptrapd printed for a VarBind, without its type
// and quotes: `X.0 = STRING: "p2"` is p2.
func vbValue(vb string) string {
	_, v, _ := strings.Cut(vb, " = ")
	_, v, _ = strings.Cut(v, ":") // after the type; "STRING:" is an empty string
	return strings.Trim(strings.TrimSpace(v), `"`)
}

// checkHotsetTrap checks one received notification: after sysUpTime.0
// and snmpTrapOID.0 (v2c, v3) come the OBJECTS in their order with want's
// values, then at most maxresp hot items with the values in items, and
// no Counter64 anywhere.
func checkHotsetTrap(t *testing.T, who string, vbs []string, v1 bool, trapNo int, want map[string]string, items []string) {
	t.Helper()
	if !v1 {
		// sysUpTime.0 prints as SNMPv2-SMI::mib-2.1.3.0 without SNMPv2-MIB.
		if len(vbs) < 2 || !strings.Contains(vbs[0], "1.3.0 = Timeticks: ") ||
			!strings.HasSuffix(vbs[1], fmt.Sprintf("1.4.1.0 = OID: SUBAGENT-MIB::hotsetTrap%d", trapNo)) {
			t.Errorf("%s: trap %d does not start with sysUpTime.0, snmpTrapOID.0: %q", who, trapNo, vbs)
			return
		}
		vbs = vbs[2:]
	}
	if len(vbs) < len(hotsetObjects) {
		t.Errorf("%s: trap %d has %d VarBinds after the header, want at least %d: %q", who, trapNo, len(vbs), len(hotsetObjects), vbs)
		return
	}
	for i, o := range hotsetObjects {
		if !strings.HasPrefix(vbs[i], "SUBAGENT-MIB::"+o+".0 = ") {
			t.Errorf("%s: trap %d: $%d is %q, want %s", who, trapNo, i+1, vbs[i], o)
		} else if w, ok := want[o]; ok && vbValue(vbs[i]) != w {
			t.Errorf("%s: trap %d: %s = %q, want %q", who, trapNo, o, vbValue(vbs[i]), w)
		}
	}
	rest := vbs[len(hotsetObjects):]
	if len(rest) > len(items) {
		t.Errorf("%s: trap %d: %d hot items after the objects, at most %d: %q", who, trapNo, len(rest), len(items), rest)
	}
	for i, vb := range rest {
		if i < len(items) && vbValue(vb) != items[i] {
			t.Errorf("%s: trap %d: hot item %d is %q, want the value %s", who, trapNo, i+1, vb, items[i])
		}
	}
	for _, vb := range vbs {
		if strings.Contains(vb, "Counter64") {
			t.Errorf("%s: trap %d carries a Counter64: %q", who, trapNo, vb)
		}
	}
}

// A threshold crossing driven by a supplier reaches snmptrapd through the
// master's AgentX Notify (translated to SNMPv1 by its trapsink, as an
// SNMPv2c trap by its trap2sink and as an SNMPv3 authPriv inform) and
// directly in SNMPv1, v2c, v2c inform and v3 authPriv. Every receiver gets
// both notifications with the OBJECTS clause first and in order ($1..$8),
// the hot items after, no Counter64, and for the counter hotset the rate
// that crossed (the exceptions table's), not the cumulative counter.
// With the module the daemon describes, snmptrapd prints names. A
// refusing destination is counted and blocks nothing.
func TestHotsetTrapsEndToEnd(t *testing.T) {
	mibtest.Require(t, "snmptranslate", "smilint")
	const user, auth, priv = "hotuser", "authpass123", "privpass123"
	addrs := map[string]string{}
	for _, k := range []string{"master", "masterv1", "masterv3", "v1", "v2c", "inform", "v3"} {
		addrs[k] = snmpdtest.FreeUDPAddr(t)
	}
	refused := snmpdtest.FreeUDPAddr(t) // nobody listens there
	// The master delivers with its own sinks: trapsink (v1), trap2sink,
	// and an SNMPv3 authPriv inform session.
	s := snmpdtest.Start(t, snmpdtest.Options{TrapSink: addrs["master"], V1TrapSink: addrs["masterv1"], ExtraConfig: []string{
		"trapsess -Ci -r 2 -t 1 -v 3 -u " + user + " -l authPriv -a SHA -A " + auth + " -x AES -X " + priv + " udp:" + addrs["masterv3"]}})
	e := newEnv(t)
	conf := hotsetYAML + `traps:
  - {address: ` + addrs["v1"] + `, version: v1, community: public}
  - {address: ` + addrs["v2c"] + `, version: v2c, community: public}
  - {address: ` + addrs["inform"] + `, version: v2c, community: public, inform: true, retries: 2, timeout: 1s}
  - {address: ` + addrs["v3"] + `, version: v3, user: ` + user + `, auth_protocol: SHA, auth_password: ` + auth +
		`, priv_protocol: AES, priv_password: ` + priv + `}
  - {address: ` + refused + `, version: v2c, community: public, inform: true, retries: 0, timeout: 300ms}
`
	file := startConfigured(t, e, s, conf)
	engine := stateEngineID(t, e) // v3 traps come from the agent's engine
	sup, loads, flows := pumpSupplier(t, e)
	const raw = 1_000_000_000 // the counters' start: far from any rate
	sup.Update(func() {
		for i, g := range loads {
			g.Set(int64(10 * (i + 1)))
			flows[i].Set(raw)
		}
	})
	waitValue(t, e, "Hotset/hotpumps/groups", "1", 10*time.Second)
	// The counter hotset comes by a reload now, so that its first rate
	// is not the jump from 0 to raw.
	if err := os.WriteFile(file, []byte(strings.Replace(conf, "traps:", hotflowYAML+"traps:", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := e.daemon.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitValue(t, e, "Hotset/hotflow/groups", "1", 10*time.Second)
	waitValue(t, e, "Hotset/hotflow/error", "0", 10*time.Second)
	if v := getValue(t, e, "Hotset/hotpumps/count"); v != "0" {
		t.Fatalf("below the threshold the feed has %s rows", v)
	}

	module, text, _, stderr, code := runMIB(t, e, "SUBAGENT-MIB")
	if code != 0 || !strings.Contains(text, "hotsetTrap21 NOTIFICATION-TYPE") || !strings.Contains(text, "hotsetTrap22 NOTIFICATION-TYPE") {
		t.Fatalf("subagent mib (%s) declares no hotsetTrap21 and 22:\n%s", stderr, grepLines(text, "hotsetTrap"))
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
	v1 := map[string]bool{"v1": true, "masterv1": true}
	header := func(k string, trapNo int) string {
		if v1[k] {
			return fmt.Sprintf("Enterprise Specific Trap (SUBAGENT-MIB::hotsetTrap%d)", trapNo)
		}
		return fmt.Sprintf("OID: SUBAGENT-MIB::hotsetTrap%d", trapNo)
	}

	// Levels: p2 and p1 cross, hottest first.
	start := time.Now()
	setLoads(sup, loads, 85, 95, 50)
	for k, d := range trapd {
		if log, err := d.WaitFor(15*time.Second, header(k, 21)); err != nil {
			t.Errorf("%s: %v\n%s", k, err, log)
			continue
		}
		got := d.VarBinds("hotsetName.0 = STRING: hotpumps")
		if len(got) != 1 {
			t.Errorf("%s: %d hotpumps notifications, want 1:\n%s", k, len(got), d.Log())
			continue
		}
		checkHotsetTrap(t, k, got[0], v1[k], 21, map[string]string{"hotsetName": "hotpumps", "hotsetPeerContext": "DDS/Acme/Pumps/",
			"hotsetThreshold": "80", "hotsetSeverity": "3", "hotsetPeerName": "p2", "hotsetPeerValue": "95",
			"hotsetValueUnits": "", "hotsetPeerList": "p2=95 p1=85"}, []string{"95", "85"})
	}
	t.Logf("level notifications arrived %v after the crossing", time.Since(start))

	// Counters: the rate since the previous evaluation crosses, and the
	// notification carries that rate, as the exceptions table records it.
	sup.Update(func() { flows[0].Add(3000); flows[1].Add(5000); flows[2].Add(10) })
	for k, d := range trapd {
		if log, err := d.WaitFor(15*time.Second, header(k, 22)); err != nil {
			t.Errorf("%s: %v\n%s", k, err, log)
		}
	}
	peers := getText(t, e, "Hotset/hotflow/excp/1/peers")
	top := getValue(t, e, "Hotset/hotflow/excp/1/name")
	var p2, p1 float64
	if n, err := fmt.Sscanf(peers, "p2=%g p1=%g", &p2, &p1); n != 2 || err != nil || top != "p2" {
		t.Fatalf("exceptions table of hotflow: peers %q, hottest %q; want p2=<rate> p1=<rate>", peers, top)
	}
	// 5000 and 3000 litres within about one interval of 1 s.
	if p2 < 1000 || p2 > 6000 || p1 < 1000 || p1 > p2 {
		t.Errorf("rates p2 %v, p1 %v litres/s: not the rates of 5000 and 3000 litres in about 1 s", p2, p1)
	}
	for k, d := range trapd {
		got := d.VarBinds("hotsetName.0 = STRING: hotflow")
		if len(got) != 1 {
			t.Errorf("%s: %d hotflow notifications, want 1:\n%s", k, len(got), d.Log())
			continue
		}
		checkHotsetTrap(t, k, got[0], v1[k], 22, map[string]string{"hotsetName": "hotflow", "hotsetThreshold": "1000",
			"hotsetSeverity": "4", "hotsetPeerName": "p2", "hotsetPeerValue": strings.TrimPrefix(strings.Fields(peers)[0], "p2="),
			"hotsetValueUnits": "per second", "hotsetPeerList": peers}, nil) // counters are Counter64: no items
		if strings.Contains(d.Log(), fmt.Sprint(raw)) {
			t.Errorf("%s: the cumulative counter was sent:\n%s", k, d.Log())
		}
	}

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
	if v := getText(t, e, "Hotset/hotpumps/excp/1/peers"); v != "p2=95 p1=85" {
		t.Errorf("exceptions table: %q", v)
	}
	if !strings.Contains(e.daemonLog.String(), "hotset exception") || !strings.Contains(e.daemonLog.String(), "severity=3") {
		t.Errorf("no exception logged with its severity:\n%s", e.daemonLog)
	}
	// Two notifications to four working destinations and one refusing.
	waitValue(t, e, "Agent/traps/sent", "8", 10*time.Second)
	waitValue(t, e, "Agent/traps/failed", "2", 10*time.Second)
	waitValue(t, e, "Agent/traps/down", "1", 10*time.Second)
	waitValue(t, e, "Agent/traps/mastersent", "2", 10*time.Second)
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

// A misspelled hotset is no silent no-op: it reports SiNotFound (188) in
// its error and errmsg with the nearest path that exists, and the log
// says so once. A hotset on DDS statistics that register later reports
// the same until they come, then joins them and the error clears.
func TestHotsetTypoAndLateDDS(t *testing.T) {
	e := newEnv(t)
	file := filepath.Join(t.TempDir(), "subagent.yaml")
	conf := "hotset:\n  interval: 1s\nhotsets:\n" +
		"  - {name: typo, stat: Disk/*/bussy, maxresp: 2, feed_type: always}\n" +
		"  - {name: later, stat: DDS/Acme/Pumps/*/load, maxresp: 2, feed_type: always}\n"
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	e.start("--config", file)
	waitValue(t, e, "Hotset/typo/error", "188", 10*time.Second)
	if msg := getText(t, e, "Hotset/typo/errmsg"); !strings.Contains(msg, "Disk/*/bussy matches no statistic") || !strings.Contains(msg, "did you mean Disk/*/busy?") {
		t.Errorf("errmsg %q: want what matched nothing and the suggestion", msg)
	}
	if v := getValue(t, e, "Hotset/typo/groups"); v != "0" {
		t.Errorf("groups %s", v)
	}
	waitValue(t, e, "Hotset/later/error", "188", 10*time.Second)
	testutil.Eventually(t, "a log line for the DDS hotset", 10*time.Second, func() bool {
		return strings.Contains(e.daemonLog.String(), "hotset=later")
	})

	sup, loads, _ := pumpSupplier(t, e)
	setLoads(sup, loads, 10, 30, 20)
	waitValue(t, e, "Hotset/later/error", "0", 10*time.Second)
	waitValue(t, e, "Hotset/later/feed/1/name", "p2", 10*time.Second)
	if v := getText(t, e, "Hotset/later/errmsg"); v != `""` {
		t.Errorf("errmsg after the statistics came: %q, want empty", v)
	}
	testutil.Eventually(t, "the cleared error logged", 10*time.Second, func() bool {
		return strings.Contains(e.daemonLog.String(), `msg="hotset matches its statistic again" part=hotsets hotset=later`)
	})
	log := e.daemonLog.String()
	if n := strings.Count(log, "hotset=typo"); n != 1 || !strings.Contains(log, "did you mean Disk/*/busy?") {
		t.Errorf("the typo was logged %d times (want once, with the suggestion):\n%s", n, log)
	}
}
