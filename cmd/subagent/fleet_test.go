package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/promtest"
	"github.com/perfagent/subagent/mib/mibtest"
	"github.com/perfagent/subagent/rtimelan"
)

// fleetHosts is how many daemons the fleet test runs.
const fleetHosts = 20

// The fleet test's scrape and evaluation interval, and the rate window
// that replaces the rules' 5m: 12 scrapes. A walk of a loaded machine's
// daemon takes seconds (its ~90 GetBulk round trips each wait to be
// scheduled), so 10 s, with a timeout of 10 s.
const (
	fleetInterval = 10 * time.Second
	fleetWindow   = "2m"
	fleetWindowS  = 120.0
	// get --interval's, within the 30 s that env.run allows a command.
	getInterval = 20 * time.Second
)

// What deploy/ holds, as the fleet test installs it: the same files, the
// intervals shortened (rules' [5m] windows to fleetWindow, alerts' "for"
// to 4s) and the addresses the test's.
type fleetFiles struct {
	exporter string
	// A shard scrapes at the shipped 15 s, which keeps the second walk of
	// each host cheap; only its presence at the central one is checked.
	shard bool
}

// install writes deploy/prometheus's config (prometheus.yml or
// shard.yml, edited by edits: old -> new, each of which must apply),
// rules, alerts and the targets file into a directory of its own, and
// returns the config's path.
func (f fleetFiles) install(t *testing.T, config string, targets string, edits ...string) string {
	t.Helper()
	dir := t.TempDir()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("../../deploy/prometheus", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	replace := func(name, s string, pairs ...string) string {
		for i := 0; i+1 < len(pairs); i += 2 {
			if !strings.Contains(s, pairs[i]) {
				t.Fatalf("%s has no %q to replace: deploy/ changed, update the fleet test", name, pairs[i])
			}
			s = strings.ReplaceAll(s, pairs[i], pairs[i+1])
		}
		return s
	}
	iv := fleetInterval.String()
	if f.exporter != "" { // a scraping one (central.yml scrapes nothing)
		edits = append([]string{"127.0.0.1:9116", f.exporter}, edits...)
	}
	if f.exporter != "" && !f.shard {
		edits = append([]string{"scrape_interval: 15s", "scrape_interval: " + iv, "scrape_timeout: 10s", "scrape_timeout: " + iv,
			"evaluation_interval: 15s", "evaluation_interval: " + iv}, edits...)
	}
	cfg := replace(config, read(config), edits...)
	rules := replace("rules.yml", read("rules.yml"), "[5m]", "["+fleetWindow+"]")
	alerts := read("alerts.yml")
	for _, d := range []string{"2m", "5m", "10m", "15m"} {
		alerts = strings.ReplaceAll(alerts, "for: "+d, "for: 4s")
	}
	os.MkdirAll(filepath.Join(dir, "targets"), 0o755)
	for name, body := range map[string]string{"prometheus.yml": cfg, "rules.yml": rules, "alerts.yml": alerts, "targets/hosts.yml": targets} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "prometheus.yml")
}

// The fleet in a box (docs/FLEET.md): fleetHosts daemons, each its own
// host, scraped through the real snmp_exporter by the real Prometheus with
// deploy/prometheus's configuration, rules and alerts: every recording
// rule and every dashboard query returns each host, with the values
// `subagent get` reads on it (rates within 2 %); a stopped daemon's host
// fires SubagentDown; two hashmod shards remote-writing to a central
// Prometheus hold every host exactly once there. Host 0 is walked with
// SNMPv3 authPriv (snmp-auths.yml), the others with v2c.
func TestFleetThroughPrometheus(t *testing.T) {
	promtest.Tool(t, "prometheus")
	if p, _, err := rtimelan.OpenPinger(nil); err != nil {
		t.Fatalf("RTime/LAN needs ICMP sockets here: %v", err)
	} else {
		p.Close()
	}
	ex := mibtest.InstallExporter(t)
	mibs, err := filepath.Abs("../../MIBs")
	if err != nil {
		t.Fatal(err)
	}
	auths, err := filepath.Abs("../../deploy/prometheus/snmp-auths.yml")
	if err != nil {
		t.Fatal(err)
	}
	snmpYml := ex.Generate(t, []string{mibs}, filepath.Join(mibs, "snmp_exporter", "generator.yml"))

	var hosts []*fleetHost
	for n := range fleetHosts {
		hosts = append(hosts, startFleetHost(t, n, n == 0))
	}
	lag := moveCounters(t, hosts)
	// targets.example.yml's shape: host 0 in a group of its own with auth.
	targets := fmt.Sprintf("- targets: [%s]\n  labels:\n    auth: subagent_v3\n- targets: [", hosts[0].addr)
	for i, h := range hosts[1:] {
		if i > 0 {
			targets += ", "
		}
		targets += h.addr
	}
	targets += "]\n"

	// The single Prometheus, and the sharded layout beside it: two shards,
	// each with its own exporter, writing to the central one.
	web, exLog := startExporter(t, ex, snmpYml, auths)
	prom := promtest.Start(t, fleetFiles{exporter: web}.install(t, "prometheus.yml", targets))
	central := promtest.Start(t, fleetFiles{}.install(t, "central.yml", ""), "--web.enable-remote-write-receiver")
	for shard := range 2 {
		web, _ := startExporter(t, ex, snmpYml, auths)
		s := strconv.Itoa(shard)
		promtest.Start(t, fleetFiles{exporter: web, shard: true}.install(t, "shard.yml", targets,
			`regex: "0" # SHARD`, `regex: "`+s+`"`, `shard: "0" # SHARD`, `shard: "`+s+`"`,
			"http://central.example.org:9090/api/v1/write", "http://"+central.Addr+"/api/v1/write"))
	}

	query := func(expr string) []promtest.Sample {
		t.Helper()
		r, err := prom.Query(expr)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	instances := func(r []promtest.Sample) map[string]int {
		m := map[string]int{}
		for _, s := range r {
			m[s.Metric["instance"]]++
		}
		return m
	}
	// waitHosts waits until expr has every host, or fails saying which
	// are missing and why their scrapes fail.
	waitHosts := func(what, expr string, within time.Duration) {
		t.Helper()
		deadline := time.Now().Add(within)
		for {
			got := instances(query(expr))
			if len(got) == fleetHosts {
				return
			}
			if time.Now().After(deadline) {
				var missing []string
				for _, h := range hosts {
					if got[h.addr] == 0 {
						missing = append(missing, h.addr)
					}
				}
				errs, err := prom.TargetErrors()
				t.Fatalf("%s: %d hosts within %v, missing %v\nscrapes in the window: %v\nscrape durations: %v\ntarget errors %v %v\nexporter log:\n%s",
					what, len(got), within, missing, query(`count_over_time(up{job="subagent"}[`+fleetWindow+`])`),
					query(`scrape_duration_seconds{job="subagent"}`), errs, err, testutil.Tail(exLog.String(), 20))
			}
			time.Sleep(fleetInterval / 2)
		}
	}
	// Every host scraped, and rates over a full window.
	waitHosts("every host up", `up{job="subagent"} == 1`, 3*time.Minute)
	time.Sleep(13 * fleetInterval) // a window of scrapes after the first
	waitHosts("CPU busy of every host", `instance:subagent_cpu_busy:percent`, time.Minute)

	checkFleetSeries(t, prom, hosts)
	// get --interval on every host while the cost is measured.
	getPaths := []string{"CPU/total/user", "CPU/total/kern", "CPU/total/idle", "CPU/total/wait", "Disk/sda/busy", "Disk/sda/rblk", "LAN/eth0/ibyte"}
	ratesDone := make(chan []map[string]float64)
	go func() { ratesDone <- getRates(t, hosts, getInterval, getPaths...) }()
	measureFleet(t, prom, hosts, web)
	checkFleetValues(t, prom, hosts, <-ratesDone, lag())
	checkFleetLiveLevel(t, prom, hosts)
	checkCentral(t, central, hosts)

	// A stopped daemon: its host fires SubagentDown, and only it.
	down := hosts[len(hosts)-1]
	down.e.stop()
	testutil.Eventually(t, "SubagentDown firing for "+down.addr, time.Minute, func() bool {
		r := query(`ALERTS{alertname="SubagentDown",alertstate="firing"}`)
		return len(r) == 1 && r[0].Metric["instance"] == down.addr
	})
}

// armRules are the rules and panels no fleet host has series for: none
// runs an ARM application nor has an objective (the service levels'
// names hold "arm_" too; their unit tests in deploy/ cover them).
func armOnly(expr string) bool { return strings.Contains(expr, "arm_") }

// Every recording rule and every dashboard query returns every host: one
// series per host for host-level rules, the same number per host for the
// per-instance ones.
func checkFleetSeries(t *testing.T, prom *promtest.Server, hosts []*fleetHost) {
	t.Helper()
	var exprs []promtest.Panel
	seen := map[string]bool{}
	for _, r := range promtest.Rules(t, "../../deploy/prometheus/rules.yml") {
		if !seen[r.Record] {
			seen[r.Record] = true
			exprs = append(exprs, promtest.Panel{Title: "rule", Expr: r.Record})
		}
	}
	for _, p := range promtest.DashboardQueries(t, "../../deploy/grafana/subagent.json") {
		exprs = append(exprs, promtest.Panel{Title: "panel " + p.Title, Expr: strings.ReplaceAll(p.Expr, "$host", ".+")})
	}
	for _, e := range exprs {
		r, err := prom.Query(e.Expr)
		if err != nil {
			t.Errorf("%s: %v", e.Title, err)
			continue
		}
		per := map[string]int{}
		for _, s := range r {
			per[s.Metric["instance"]]++
		}
		if armOnly(e.Expr) {
			if len(r) != 0 {
				t.Errorf("%s %s: %d series where no host runs ARM", e.Title, e.Expr, len(r))
			}
			continue
		}
		if len(per) != len(hosts) {
			t.Errorf("%s %s: %d hosts, want %d: %v", e.Title, e.Expr, len(per), len(hosts), per)
			continue
		}
		counts := map[int]bool{}
		for _, n := range per {
			counts[n] = true
		}
		if len(counts) != 1 {
			t.Errorf("%s %s: hosts have different numbers of series: %v", e.Title, e.Expr, per)
		}
		if strings.HasPrefix(e.Expr, "instance:") && !strings.Contains(e.Expr, "top_process") && per[hosts[0].addr] != 1 {
			t.Errorf("%s %s: %d series per host, want 1", e.Title, e.Expr, per[hosts[0].addr])
		}
	}
}

// value returns the one value of expr for a host.
func fleetValue(t *testing.T, prom *promtest.Server, expr string, h *fleetHost) (float64, bool) {
	t.Helper()
	sel := `instance="` + h.addr + `"`
	if i := strings.Index(expr, "{"); i >= 0 {
		expr = expr[:i+1] + sel + "," + expr[i+1:]
	} else {
		expr += "{" + sel + "}"
	}
	r, err := prom.Query(expr)
	if err != nil || len(r) != 1 {
		t.Errorf("%s: %d series, %v", expr, len(r), err)
		return 0, false
	}
	return r[0].Value, true
}

func within(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want)+1e-9 }

// The rules' values are what the host shows: levels equal to `subagent
// get`; rates within 2 % of the rate the host's counters move at, as
// `subagent get --interval 20s` on the host is, plus what timing
// explains: a value is read up to min_age (300 ms) after the counters'
// last rewrite, which is up to lag (the longest gap between two) old; a
// scrape's values are read anywhere within its walk, not at the scrape's
// timestamp. Each end of a rate's window is off by up to that much.
func checkFleetValues(t *testing.T, prom *promtest.Server, hosts []*fleetHost, rates []map[string]float64, lag time.Duration) {
	t.Helper()
	walk := 0.0
	if r, err := prom.Query(`max(max_over_time(scrape_duration_seconds{job="subagent"}[` + fleetWindow + `]))`); err == nil && len(r) == 1 {
		walk = r[0].Value
	}
	old := 0.3 + lag.Seconds()
	tolProm, tolGet := 0.02+2*(walk+old)/fleetWindowS, 0.02+2*old/getInterval.Seconds()
	t.Logf("rates: Prometheus within %.1f %% (longest walk %.2f s, values up to %.2f s old, over a %s window), get within %.1f %%",
		100*tolProm, walk, old, fleetWindow, 100*tolGet)
	// The deviations found, beside the tolerances: what the timing
	// explains is a bound, not what happens.
	worst, worstGet := 0.0, 0.0
	defer func() {
		t.Logf("rates: furthest from the host's: Prometheus %.2f %%, get %.2f %%", 100*worst, 100*worstGet)
	}()
	for i, h := range hosts {
		g := rates[i] // nil when get failed (an error already)
		all := g["CPU/total/user"] + g["CPU/total/kern"] + g["CPU/total/idle"] + g["CPU/total/wait"]
		for _, c := range []struct {
			expr      string
			get, want float64
		}{
			{"instance:subagent_cpu_busy:percent", 100 * (g["CPU/total/user"] + g["CPU/total/kern"]) / all, h.busyPercent()},
			{`cpu:subagent_cpu_busy:percent{cpuName="cpu2"}`, 100 * (g["CPU/total/user"] + g["CPU/total/kern"]) / all, h.busyPercent()},
			{`disk:subagent_disk_busy:percent{diskName="sda"}`, g["Disk/sda/busy"], h.diskBusy()},
			{`disk:subagent_disk_read:bytes_rate5m{diskName="sda"}`, 512 * g["Disk/sda/rblk"], 512 * h.diskSectors()},
			{`lan:subagent_network_received:bytes_rate5m{lanName="eth0"}`, g["LAN/eth0/ibyte"], h.lanBytes()},
		} {
			v, ok := fleetValue(t, prom, c.expr, h)
			if !ok {
				continue
			}
			worst = math.Max(worst, math.Abs(v-c.want)/c.want)
			if g != nil {
				worstGet = math.Max(worstGet, math.Abs(c.get-c.want)/c.want)
			}
			if !within(v, c.want, tolProm) || g != nil && !within(c.get, c.want, tolGet) {
				t.Errorf("host %d %s = %v; subagent get --interval: %v; the host's rate %v", h.n, c.expr, v, c.get, c.want)
			}
		}
		lv := getFloats(t, h.e, "Mem/Real/size", "Mem/Real/avail", "Proc/pid/1187/rss", "PagSp/%free")
		for _, c := range []struct {
			expr     string
			want, by float64
		}{
			{"instance:subagent_memory_used:bytes", 1024 * (lv["Mem/Real/size"] - lv["Mem/Real/avail"]), 0},
			{`instance:subagent_top_process_rss:bytes{procPidIndex="1187"}`, 1024 * lv["Proc/pid/1187/rss"], 0},
			{"instance:subagent_paging_space_used:percent", 100 - lv["PagSp/%free"], 0},
		} {
			if v, ok := fleetValue(t, prom, c.expr, h); ok && math.Abs(v-c.want) > c.by+1e-9*math.Abs(c.want) {
				t.Errorf("host %d %s = %v, subagent get: %v", h.n, c.expr, v, c.want)
			}
		}
		// RTime/LAN to 127.0.0.1 answers within milliseconds, every echo
		// but one now and then on a loaded machine (the 500 ms timeout).
		if v, ok := fleetValue(t, prom, `lan_host:subagent_rtime_lan_loss:ratio{rTimeLANName="127.0.0.1"}`, h); ok && v > 0.05 {
			t.Errorf("host %d: echo loss to 127.0.0.1 %v", h.n, v)
		}
		if v, ok := fleetValue(t, prom, `lan_host:subagent_rtime_lan_response:seconds{rTimeLANName="127.0.0.1"}`, h); ok && (v <= 0 || v > 0.1) {
			t.Errorf("host %d: response time to 127.0.0.1 %v s", h.n, v)
		}
		if v, ok := fleetValue(t, prom, "instance:subagent_data_age:seconds", h); ok && (v < 0 || v > 5) {
			t.Errorf("host %d: data age %v s", h.n, v)
		}
	}
}

// The central Prometheus holds every host exactly once: one CPU series
// per host, from one shard, and both shards have hosts when the fleet has
// more than a few.
func checkCentral(t *testing.T, central *promtest.Server, hosts []*fleetHost) {
	t.Helper()
	var r []promtest.Sample
	testutil.Eventually(t, "every host at the central Prometheus", 2*time.Minute, func() bool {
		var err error
		r, err = central.Query(`cpuTotalIdle`)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]bool{}
		for _, s := range r {
			m[s.Metric["instance"]] = true
		}
		return len(m) == len(hosts)
	})
	per, shards := map[string]int{}, map[string]int{}
	for _, s := range r {
		per[s.Metric["instance"]]++
		shards[s.Metric["shard"]]++
	}
	for _, h := range hosts {
		if per[h.addr] != 1 {
			t.Errorf("central: host %s has %d cpuTotalIdle series, want 1", h.addr, per[h.addr])
		}
	}
	if len(hosts) >= 8 && (shards["0"] == 0 || shards["1"] == 0) {
		t.Errorf("central: hosts per shard %v: one shard has none", shards)
	}
	t.Logf("central: %d hosts, per shard %v", len(per), shards)
	if rr, err := central.Query(`count by (instance) (instance:subagent_cpu_busy:percent)`); err != nil || len(rr) != len(hosts) {
		t.Errorf("central: recorded CPU busy of %d hosts (%v), want %d", len(rr), err, len(hosts))
	}
}

// measureFleet logs the per-host cost docs/FLEET.md states: scrape
// duration, samples and bytes per scrape, and the daemons' CPU per walk.
func measureFleet(t *testing.T, prom *promtest.Server, hosts []*fleetHost, exporter string) {
	t.Helper()
	one := func(expr string) float64 {
		r, err := prom.Query(expr)
		if err != nil || len(r) != 1 {
			t.Errorf("%s: %v %v", expr, r, err)
			return 0
		}
		return r[0].Value
	}
	body, err := scrape("http://" + exporter + "/snmp?target=" + hosts[1].addr + "&module=subagent&auth=public_v2")
	if err != nil {
		t.Error(err)
	}
	cpu := func() float64 {
		var ticks float64
		for _, h := range hosts {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", h.e.daemon.Process.Pid))
			if err != nil {
				t.Fatal(err)
			}
			f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
			u, _ := strconv.ParseFloat(f[11], 64)
			s, _ := strconv.ParseFloat(f[12], 64)
			ticks += u + s
		}
		return ticks / 100 // USER_HZ
	}
	// Each host is walked by the single Prometheus and by one shard (every
	// 15 s).
	const window = 30 * time.Second
	c0 := cpu()
	time.Sleep(window)
	used := cpu() - c0
	perWalk := used / (float64(len(hosts)) * (window.Seconds()/fleetInterval.Seconds() + window.Seconds()/15))
	names := []string{}
	for _, l := range strings.Split(body, "\n") {
		if l != "" && l[0] != '#' {
			names = append(names, l)
		}
	}
	sort.Strings(names)
	t.Logf("per host: scrape %.1f ms (max %.1f), SNMP walk %.1f ms, %.0f samples (%.0f stored), %d bytes, daemon CPU %.2f ms per walk (%.2f s over %v, %d hosts, walked every %v and every 15 s; its idle cost, RTime/LAN's pings each second included)",
		1000*one(`avg(scrape_duration_seconds{job="subagent"})`), 1000*one(`max(scrape_duration_seconds{job="subagent"})`),
		1000*one(`avg(snmp_scrape_duration_seconds)`), one(`avg(scrape_samples_scraped{job="subagent"})`),
		one(`avg(scrape_samples_post_metric_relabeling{job="subagent"})`),
		len(body), 1000*perWalk, used, window, len(hosts), fleetInterval)
	t.Logf("exposition of one host: %d samples; snmp_exporter CPU %.2f ms per walk (%d walks every %v)", len(names),
		1000*one(`rate(process_cpu_seconds_total{job="snmp_exporter"}[`+fleetWindow+`])`)*fleetInterval.Seconds()/float64(len(hosts)), len(hosts), fleetInterval)
}

// checkFleetLiveLevel: the fixture's mounts are statfs'd on this machine,
// whose / other tests fill and empty (a debootstrap root is hundreds of
// MB) between a scrape and a get. So the value Prometheus records must
// come from a scrape between two gets and lie between them (0.1 % of
// slack for what moves within a get).
func checkFleetLiveLevel(t *testing.T, prom *promtest.Server, hosts []*fleetHost) {
	t.Helper()
	const raw, rule = `fsPctUsed{fsMount="/"}`, `fs:subagent_fs_used:percent{fsMount="/"}`
	before := make([]float64, len(hosts))
	for i, h := range hosts {
		before[i] = getFloats(t, h.e, "FS/root/%used")["FS/root/%used"]
	}
	t0 := float64(time.Now().UnixMilli()) / 1000
	// Scraped after t0, and the rule evaluated on that scrape: bounded by
	// a few scrape and evaluation intervals.
	scrapedAfter := func(h *fleetHost) bool {
		ts, ok1 := fleetValue(t, prom, "timestamp("+raw+")", h)
		tr, ok2 := fleetValue(t, prom, "timestamp("+rule+")", h)
		return ok1 && ok2 && ts > t0 && tr >= ts
	}
	for _, h := range hosts {
		testutil.Eventually(t, fmt.Sprintf("host %d: a scrape of %s after the first get", h.n, raw), 90*time.Second, func() bool { return scrapedAfter(h) })
	}
	for i, h := range hosts {
		v, ok := fleetValue(t, prom, rule, h)
		after := getFloats(t, h.e, "FS/root/%used")["FS/root/%used"]
		if lo, hi := min(before[i], after), max(before[i], after); ok && (v < lo-0.1 || v > hi+0.1) {
			t.Errorf("host %d %s = %v, subagent get before and after its scrape: %v, %v", h.n, rule, v, before[i], after)
		}
	}
}
