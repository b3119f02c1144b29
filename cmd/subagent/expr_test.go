package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/internal/docexamples"
	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/mib/mibtest"
)

const derivedYAML = `expressions:
  interval: 1s
derived:
  - {name: busysum, expr: "sum(raw(Disk/*/busy))"}
  - {name: idleavg, expr: "avg(raw(CPU/*/idle))", scale: 2}
  - {name: lanbytes, expr: "raw(LAN/*/ibyte) + raw(LAN/*/obyte)"}
  - {name: busyrate, expr: "sum(Disk/*/busy)", scale: 2}
  - {name: idlerate, expr: "avg(CPU/*/idle)", scale: 2}
  - {name: lanrate, expr: "LAN/*/ibyte + LAN/*/obyte", scale: 2}
`

// getNumbers reads statistics with subagent get (rates with --interval
// and --count 2: the second reading's) and returns them by path.
func getNumbers(t *testing.T, e *env, paths []string, rates bool) map[string]float64 {
	t.Helper()
	args := append([]string{"get"}, paths...)
	if rates {
		args = append(args, "--interval", "1s", "--count", "2")
	}
	out, stderr, code := e.run(append(args, e.args()...)...)
	if code != 0 {
		t.Fatalf("get %v: %s", paths, stderr)
	}
	got := map[string]float64{}
	if !rates {
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) >= 2 {
				if v, err := strconv.ParseFloat(f[1], 64); err == nil {
					got[f[0]] = v
				}
			}
		}
		return got
	}
	// With --interval: a header of paths, then a line per reading: its
	// time, then each rate per second (a time counter's as a percent).
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := strings.Fields(lines[len(lines)-1])
	if len(last) > 0 {
		last = last[1:]
	}
	if len(last) != len(paths) {
		t.Fatalf("get --interval printed %q for %d paths", lines[len(lines)-1], len(paths))
	}
	for i, p := range paths {
		v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSuffix(last[i], "%"), "/s"), 64)
		if err != nil {
			t.Fatalf("rate of %s: %q", p, last[i])
		}
		got[p] = v
	}
	return got
}

// The derived statistics served through snmpd equal the same arithmetic
// on subagent get of their inputs: the sum of the disks' busy counts, the
// mean of the processors' idle times (CPU/total, the aggregate, left out)
// and each interface's bytes both ways; and their rates over the
// evaluation interval equal get --interval's (the fixture host's
// counters stand still, so both are the same whatever the interval).
func TestDerivedThroughSnmpdEqualTheirInputs(t *testing.T) {
	s := snmpdtest.Start(t, snmpdtest.Options{})
	e := newEnv(t)
	startConfigured(t, e, s, derivedYAML)
	waitValue(t, e, "Agent/expr/busyrate/errmsg", `""`, 15*time.Second) // empty text
	lanNames := e.instances(t, "LAN/")
	if len(lanNames) < 2 {
		t.Fatalf("the fixture host has interfaces %v: want 2 or more", lanNames)
	}
	// The first evaluation has no rates; a per-instance statistic's new
	// instances join the tree at the read after the evaluation.
	for _, p := range []string{"Derived/busyrate/value", "Derived/lanrate/" + lanNames[0] + "/value"} {
		for deadline := time.Now().Add(15 * time.Second); !regexp.MustCompile(`^[0-9.]+$`).MatchString(getValue(t, e, p)); time.Sleep(200 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s has no value after 15s\n%s", p, e.daemonLog)
			}
		}
	}
	oidOf, _, _ := e.oids(t)
	var disks, cpus, lans []string
	for _, d := range e.instances(t, "Disk/") {
		disks = append(disks, "Disk/"+d+"/busy")
	}
	for _, c := range e.instances(t, "CPU/") {
		if c != "total" {
			cpus = append(cpus, "CPU/"+c+"/idle")
		}
	}
	for _, l := range lanNames {
		lans = append(lans, "LAN/"+l+"/ibyte", "LAN/"+l+"/obyte")
	}
	if len(disks) < 2 || len(cpus) < 2 || len(lanNames) < 2 {
		t.Fatalf("the fixture host has disks %v, processors %v, interfaces %v: want 2 or more of each", disks, cpus, lanNames)
	}
	inputs := append(append(append([]string(nil), disks...), cpus...), lans...)
	for _, rates := range []bool{false, true} {
		in := getNumbers(t, e, inputs, rates)
		var busy, idle float64
		for _, p := range disks {
			busy += in[p]
		}
		for _, p := range cpus {
			idle += in[p]
		}
		idle /= float64(len(cpus))
		// name: the wire value (scaled) the arithmetic gives.
		want := map[string]float64{}
		names := []string{"busysum", "idleavg", "lanbytes"}
		scales := []float64{1, 100, 1}
		if rates {
			names, scales = []string{"busyrate", "idlerate", "lanrate"}, []float64{100, 100, 100}
		}
		want["Derived/"+names[0]+"/value"] = math.Round(busy * scales[0])
		want["Derived/"+names[1]+"/value"] = math.Round(idle * scales[1])
		for _, l := range lanNames {
			want["Derived/"+names[2]+"/"+l+"/value"] = math.Round((in["LAN/"+l+"/ibyte"] + in["LAN/"+l+"/obyte"]) * scales[2])
		}
		for p, w := range want {
			oid := oidOf[p]
			if oid == "" {
				t.Errorf("%s is not served", p)
				continue
			}
			vars, err := s.Get(oid)
			if err != nil || len(vars) != 1 {
				t.Fatalf("snmpget %s (%s): %v %v", p, oid, vars, err)
			}
			if got, err := strconv.ParseFloat(vars[0].Value, 64); err != nil || got != w {
				t.Errorf("snmpget %s = %s (%s), want %v from get of its inputs", p, vars[0].Value, vars[0].Type, w)
			}
		}
	}
}

// alarmYAML is one alarm on pump p1's load above 80, held 3 evaluations
// before firing and 2 before clearing, with the trap receiver.
func alarmYAML(trapd string) string {
	return `expressions:
  interval: 2s
alarms:
  - name: pumphot
    expr: DDS/Acme/Pumps/p1/load > 80
    for: 3
    keep: 2
    severity: 2
    cleared: true
traps:
  - {address: ` + trapd + `, version: v2c, community: public}
`
}

// alarmRow is the alarm's row of alarmTable (snmptable), nil before it
// has one.
func alarmRow(t *testing.T, s *snmpdtest.Snmpd) map[string]string {
	for _, r := range snmptable(t, "udp:"+s.Addr, s.Community, "alarmTable") {
		if r["alarmEntryName"] == "pumphot" {
			return r
		}
	}
	return nil
}

// watchStates polls the alarm's row until its state is want, and returns
// each distinct state and count seen on the way ("pending 1").
func watchStates(t *testing.T, s *snmpdtest.Snmpd, want string, within time.Duration) []string {
	t.Helper()
	var seen []string
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		r := alarmRow(t, s)
		if r == nil {
			continue
		}
		st := r["alarmState"] + " " + r["alarmCount"]
		if len(seen) == 0 || seen[len(seen)-1] != st {
			seen = append(seen, st)
		}
		if r["alarmState"] == want {
			return seen
		}
	}
	t.Fatalf("alarm state %q not reached within %v; seen %v", want, within, seen)
	return nil
}

var transitionRE = regexp.MustCompile(`msg="alarm state" part=expressions alarm=pumphot instance="" from=(\w+) to=(\w+)`)

// transitions are the alarm's state changes in the daemon's log.
func transitions(log string) []string {
	var out []string
	for _, m := range transitionRE.FindAllStringSubmatch(log, -1) {
		out = append(out, m[1]+">"+m[2])
	}
	return out
}

// A DDS statistic drives an alarm with for 3 and keep 2 exactly through
// pending, firing, clearing and inactive: snmptable shows each state
// with its count, snmptrapd receives one alarmRaised and one
// alarmCleared, the notification log holds both; a spike shorter than
// for (one evaluation) goes pending and back without a notification.
func TestAlarmPendingFiringClearingInactive(t *testing.T) {
	mibtest.Require(t, "snmptable", "snmptranslate")
	s := snmpdtest.Start(t, snmpdtest.Options{})
	trapAddr := snmpdtest.FreeUDPAddr(t)
	trapd := snmpdtest.StartTrapdWith(t, snmpdtest.TrapdOptions{Addr: trapAddr, MIBDirs: shippedDirs(t), Modules: []string{"SUBAGENT-MIB"}})
	e := newEnv(t)
	startConfigured(t, e, s, alarmYAML(trapAddr))
	sup, loads, _ := pumpSupplier(t, e)
	setLoads(sup, loads, 10, 10, 10)
	watchStates(t, s, "inactive", 20*time.Second)

	const raised, cleared = "OID: SUBAGENT-MIB::alarmRaised\t", "OID: SUBAGENT-MIB::alarmCleared\t"
	setLoads(sup, loads, 90, 10, 10)
	up := watchStates(t, s, "firing", 20*time.Second)
	setLoads(sup, loads, 10, 10, 10)
	down := watchStates(t, s, "inactive", 20*time.Second)
	if len(down) > 0 && down[0] == up[len(up)-1] {
		down = down[1:] // the same row, read before and after the load fell
	}
	seen := strings.Join(append(up, down...), ", ")
	// Polled every 100 ms, evaluated every 2 s: every state is seen.
	if want := "inactive 0, pending 1, pending 2, firing 0, clearing 1, inactive 0"; !strings.HasSuffix(seen, want) {
		t.Errorf("alarmTable showed %s, want it to end with %s", seen, want)
	}
	waitCount(t, trapd, cleared, 1, 15*time.Second)
	if got := strings.Join(transitions(e.daemonLog.String()), " "); got != "inactive>pending pending>firing firing>clearing clearing>inactive" {
		t.Errorf("transitions %s, want exactly pending, firing, clearing, inactive", got)
	}
	log := trapd.Log()
	if strings.Count(log, raised) != 1 || strings.Count(log, cleared) != 1 || strings.Index(log, raised) > strings.Index(log, cleared) {
		t.Fatalf("snmptrapd got %d alarmRaised and %d alarmCleared, want one each, raised first:\n%s", strings.Count(log, raised), strings.Count(log, cleared), log)
	}
	if vbs := trapd.VarBinds(raised); len(vbs) != 1 || !strings.Contains(strings.Join(vbs[0], "\t"), `alarmName.0 = STRING: pumphot`) ||
		!strings.Contains(strings.Join(vbs[0], "\t"), `alarmSeverity.0 = INTEGER: 2`) {
		t.Errorf("alarmRaised does not carry the alarm's name and severity: %q", vbs)
	}
	var oids []string
	for _, r := range snmptable(t, "udp:"+s.Addr, s.Community, "notifLogEntryTable") {
		oids = append(oids, r["notifLogEntryOid"])
	}
	for _, n := range []int{32770, 32771} {
		if w := fmt.Sprintf("%s.0.%d", base, n); !strings.Contains(strings.Join(oids, " "), w) {
			t.Errorf("the notification log lacks %s: %v", w, oids)
		}
	}

	// A spike: up until the table shows pending, then down at once.
	setLoads(sup, loads, 90, 10, 10)
	watchStates(t, s, "pending", 20*time.Second)
	setLoads(sup, loads, 10, 10, 10)
	watchStates(t, s, "inactive", 20*time.Second)
	evals := getValue(t, e, "Agent/expr/evals")
	n, _ := strconv.Atoi(evals)
	waitValue(t, e, "Agent/expr/evals", strconv.Itoa(n+2), 15*time.Second) // two more evaluations, still quiet
	if log := trapd.Log(); strings.Count(log, raised) != 1 {
		t.Errorf("the spike raised: %d alarmRaised\n%s", strings.Count(log, raised), log)
	}
	if got := strings.Join(transitions(e.daemonLog.String()), " "); !strings.HasSuffix(got, "clearing>inactive inactive>pending pending>inactive") {
		t.Errorf("transitions %s, want the spike's pending and back", got)
	}
}

// docs/EXPRESSIONS.md's commands, as printed, beside a daemon started
// with the doc's configuration: get prints memory in use and its bound,
// peek lists the derived statistics (the per-interface one has its
// instances from the second evaluation on: its counters need two).
func TestExpressionsDocBlocksRunAsPrinted(t *testing.T) {
	conf := docexamples.Get(t, "docs/EXPRESSIONS.md", "## Configuration", 1)
	block := docexamples.Get(t, "docs/EXPRESSIONS.md", "## Looking at them", 1)
	// The harness: the first evaluation done (it runs at the start).
	wait := "for i in $(seq 300); do bin/subagent get Agent/expr/evals | grep -Eq ' [1-9]' && break; sleep 0.1; done\n"
	cli := docexamples.Get(t, "docs/EXPRESSIONS.md", "## Creating them from the command line", 1)
	block.Text = wait + block.Text + cli.Text
	out, stderr := runBeside(t, block, beside{listen: "127.0.0.1:0", files: map[string]string{"expressions.yaml": conf.Text},
		daemonArgs: "--config expressions.yaml"})
	for _, re := range []string{`(?m)^Derived/memused/value\s+\d+\s+quantity`, `(?m)^Agent/expr/memused/bound\s+30000\s`, `(?m)^Derived/lanbytes/\s`,
		`(?m)^derived\s+memused\s+readOnly\s+Mem/Real/size - Mem/Real/free\s`, `(?m)^alarm\s+diskhot\s+readOnly\s.* trap_no=10$`,
		`(?m)^alarm\s+memtight\s+nonVolatile\s+Mem/Real/%free < 5\s+for=3 keep=1 severity=2 cleared=true$`,
		`(?m)^derived\s+memfreemb\s+nonVolatile\s+Mem/Real/free / 1024\s+units="MiB"`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("the block's output lacks %s:\n%s\n%s", re, out, stderr)
		}
	}
}

// subagent mib declares the derived statistics of the running daemon and
// --exporter writes snmp_exporter's generator configuration that walks
// them, with the scale of each (scale 2: 0.01).
func TestMIBAndExporterConfigDeclareDerived(t *testing.T) {
	e := newEnv(t)
	file := filepath.Join(t.TempDir(), "subagent.yaml")
	if err := os.WriteFile(file, []byte(derivedYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	e.start("--config", file)
	waitValue(t, e, "Agent/expr/busysum/errmsg", `""`, 15*time.Second)
	gen := filepath.Join(t.TempDir(), "generator.yml")
	out, stderr, code := e.run(append([]string{"mib", "--exporter", gen}, e.args()...)...)
	if code != 0 {
		t.Fatalf("subagent mib --exporter: %s", stderr)
	}
	for _, want := range []string{"derivedBusysumValue OBJECT-TYPE", "derivedIdleavgValue OBJECT-TYPE", "derivedLanbytesTable OBJECT-TYPE"} {
		if !strings.Contains(out, want) {
			t.Errorf("the module lacks %q", want)
		}
	}
	b, err := os.ReadFile(gen)
	if err != nil {
		t.Fatal(err)
	}
	// The scalars by name, the table under the node of Derived's tables.
	for _, want := range []string{"- derivedIdleavgValue  # Derived/idleavg/value\n", "- derivedTables2  # Derived/lanbytes/*/\n", "derivedIdleavgValue:\n        type: gauge\n        scale: 0.01"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the exporter configuration lacks %q:\n%s", want, b)
		}
	}
}

// SIGHUP replaces the derived statistics and alarms of the file: the
// new ones are served, the removed one is gone, and the alarm kept
// unchanged keeps its state (no second raise in the daemon's log).
func TestSIGHUPReloadsDerivedAndAlarms(t *testing.T) {
	e := newEnv(t)
	file := filepath.Join(t.TempDir(), "subagent.yaml")
	write := func(conf string) {
		if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const alarm = "alarms:\n  - {name: always, expr: \"Mem/Real/size > 0\"}\n"
	write("expressions:\n  interval: 1s\nderived:\n  - {name: before, expr: \"Mem/Real/size - Mem/Real/free\"}\n" + alarm)
	e.start("--config", file)
	waitValue(t, e, "Alarm/1/state", "firing", 15*time.Second)
	write("expressions:\n  interval: 1s\nderived:\n  - {name: after, expr: \"Mem/Real/free * 2\"}\n" + alarm)
	if err := e.daemon.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(15 * time.Second); !regexp.MustCompile(`^\d+$`).MatchString(getValue(t, e, "Derived/after/value")); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Derived/after/value not served after the reload\n%s", e.daemonLog)
		}
	}
	if got := getText(t, e, "Derived/before/value"); !strings.Contains(got, "SiNotFound") {
		t.Errorf("Derived/before/value after the reload: %q, want gone", got)
	}
	if n := strings.Count(e.daemonLog.String(), `alarm=always instance="" from=inactive to=firing`); n != 1 {
		t.Errorf("the unchanged alarm fired %d times, want once (a reload keeps its state)\n%s", n, e.daemonLog)
	}
}
