package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/mib/mibtest"
	"github.com/perfagent/subagent/mib/schema"
)

// snmpttSep separates the values of SNMPTT's $* (wildcard_expansion_separator):
// no value the test sends holds it, so the n-th field is $n.
const snmpttSep = " | "

// snmpttINI is the test's SNMPTT configuration: standalone (one snmptt
// per trap, from snmptrapd's traphandle), every file in DIR, no syslog,
// no DNS, a fixed date format, the Net-SNMP Perl module on (it names the
// trap, $O, from the MIB), no IPv6 (it needs Net::IP, which the package
// does not bring; the traps come over 127.0.0.1). Each logged line is
// "<date> <SUBAGENT-MIB::name> <$#>: <FORMAT>".
const snmpttINI = `[General]
snmptt_system_name = subagent-test
mode = standalone
multiple_event = 1
dns_enable = 0
strip_domain = 0
resolve_value_ip_addresses = 0
net_snmp_perl_enable = 1
net_snmp_perl_best_guess = 2
translate_log_trap_oid = 0
translate_trap_oid_format = 2
translate_value_oids = 1
translate_integers = 1
wildcard_expansion_separator = "` + snmpttSep + `"
date_time_format = %Y-%m-%dT%H:%M:%S
threads_enable = 0
ipv6_enable = 0
[Logging]
stdout_enable = 0
log_enable = 1
log_file = DIR/snmptt.log
log_format = $O $#: $Fz
log_system_enable = 0
unknown_trap_log_enable = 1
unknown_trap_log_file = DIR/snmpttunknown.log
syslog_enable = 0
syslog_system_enable = 0
[Exec]
exec_enable = 0
pre_exec_enable = 0
[Debugging]
DEBUGGING = 0
[TrapFiles]
snmptt_conf_files = <<END
DIR/subagent.conf
END
`

// snmpttTools finds snmptt and snmpttconvertmib (in /usr/sbin, often not in
// PATH) and the Net-SNMP Perl module snmptt translates OIDs with; a missing
// one fails the test naming its Debian package, skipped under -short.
func snmpttTools(t *testing.T) (snmptt, convert string) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test with SNMPTT: skipped under -short")
	}
	mibtest.Require(t, "snmptranslate") // snmpttconvertmib runs it
	find := func(name string) string {
		for _, p := range []string{name, "/usr/sbin/" + name} {
			if path, err := exec.LookPath(p); err == nil {
				return path
			}
		}
		t.Fatalf("%s is not installed: install the Debian package snmptt (make test-deps, scripts/install-test-deps.sh)", name)
		return ""
	}
	snmptt, convert = find("snmptt"), find("snmpttconvertmib")
	if out, err := exec.Command("perl", "-MSNMP", "-e", "1").CombinedOutput(); err != nil {
		t.Fatalf("the Net-SNMP Perl module does not load (%v): install the Debian package libsnmp-perl (snmptt depends on it)\n%s", err, out)
	}
	return snmptt, convert
}

// snmpttEvent is one EVENT of the configuration snmpttconvertmib wrote.
type snmpttEvent struct {
	OID    string   // the trap OID, with a leading dot
	Format string   // the FORMAT line
	Vars   []string // the description's "Variables:", $1 first
}

// convertMIB runs snmpttconvertmib on the shipped module into dir/subagent.conf,
// as docs/HOTSETS.md shows, and returns its events by name.
func convertMIB(t *testing.T, convert, dir string, mibDirs []string) map[string]*snmpttEvent {
	t.Helper()
	in, err := filepath.Abs("../../MIBs/SUBAGENT-MIB.txt")
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "subagent.conf")
	cmd := exec.Command(convert, "--in="+in, "--out="+conf, "--format_desc=1")
	cmd.Dir = dir
	cmd.Env = append(mibtest.NetSNMPEnv(t), "MIBDIRS="+strings.Join(mibDirs, ":"))
	out, err := cmd.CombinedOutput()
	if err != nil || !regexp.MustCompile(`Failed translations:\s+0\n`).Match(out) {
		t.Fatalf("snmpttconvertmib: %v\n%s", err, out)
	}
	b, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	events := map[string]*snmpttEvent{}
	var cur *snmpttEvent
	inVars := false
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) >= 3 && f[0] == "EVENT":
			cur = &snmpttEvent{OID: f[2]}
			events[f[1]] = cur
			inVars = false
		case cur != nil && strings.HasPrefix(l, "FORMAT "):
			cur.Format = strings.TrimPrefix(l, "FORMAT ")
		case cur != nil && l == "Variables:":
			inVars = true
		case cur != nil && l == "EDESC":
			inVars = false
		case inVars && len(f) == 2 && f[0] == strconv.Itoa(len(cur.Vars)+1)+":":
			cur.Vars = append(cur.Vars, f[1])
		}
	}
	return events
}

// snmpttLog reads SNMPTT's log: the values ($1..$n) of each line of
// event, in the order they came. A line must have the date format, the
// trap named from the MIB, the FORMAT of the converted configuration
// and as many values as $# says.
func snmpttLog(path, event string, ev *snmpttEvent) ([][]string, error) {
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	prefix := strings.TrimSuffix(ev.Format, "$*")
	line := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d SUBAGENT-MIB::` + event + ` (\d+): (.*)$`)
	var out [][]string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.Contains(l, "::"+event+" ") {
			continue
		}
		m := line.FindStringSubmatch(l)
		if m == nil || !strings.HasPrefix(m[2], prefix) {
			return nil, fmt.Errorf("SNMPTT logged %q, want date, SUBAGENT-MIB::%s, $#, then %q", l, event, ev.Format)
		}
		vals := strings.Split(strings.TrimPrefix(m[2], prefix), snmpttSep)
		if n, _ := strconv.Atoi(m[1]); n != len(vals) {
			return nil, fmt.Errorf("SNMPTT logged %d values for $# = %s: %q", len(vals), m[1], l)
		}
		out = append(out, vals)
	}
	return out, nil
}

// SNMPTT decodes the daemon's notifications with the configuration
// snmpttconvertmib generates from the shipped module: snmptrapd hands
// each trap to snmptt (standalone) and its log has treeChanged when a
// DDS supplier registers (the generation and the contexts), hotsetTrap1
// when a pump's load rises past 80 and hotsetCleared when it falls back
// below 50, each value at the $n the converted configuration lists for
// its object.
func TestSnmpttTranslatesNotifications(t *testing.T) {
	snmptt, convert := snmpttTools(t)
	dir := t.TempDir()
	// The shipped files alone, the module and the base modules it imports,
	// as a host without the IETF modules has them.
	mibs, err := filepath.Abs("../../MIBs")
	if err != nil {
		t.Fatal(err)
	}
	mibDirs := []string{mibs}
	events := convertMIB(t, convert, dir, mibDirs)
	// The $n of each object are the OBJECTS order the daemon sends.
	for _, n := range []*schema.Notification{schema.HotsetTrap(1), schema.HotsetCleared, schema.TreeChanged} {
		ev := events[n.Name]
		var want []string
		for _, o := range n.Objects {
			want = append(want, o.Name)
		}
		if ev == nil || ev.OID != "."+base+".0."+strconv.FormatUint(uint64(n.Arc[1]), 10) || !slices.Equal(ev.Vars, want) || !strings.HasSuffix(ev.Format, " $*") {
			t.Fatalf("snmpttconvertmib's %s: %+v, want OID .%s.0.%d, variables %v, a FORMAT ending in $*", n.Name, ev, base, n.Arc[1], want)
		}
	}
	pos := func(event, object string) int { return slices.Index(events[event].Vars, object) }

	ini := filepath.Join(dir, "snmptt.ini")
	if err := os.WriteFile(ini, []byte(strings.ReplaceAll(snmpttINI, "DIR", dir)), 0o600); err != nil {
		t.Fatal(err)
	}
	envPath, err := exec.LookPath("env")
	if err != nil {
		t.Fatal(err)
	}
	// snmptrapd prints numeric OIDs (-On), as SNMPTT wants; snmptt's
	// Perl module loads the module to name the trap.
	// The line goes to a shell as it is: its paths must need no quoting.
	for _, p := range append([]string{envPath, snmptt, ini}, mibDirs...) {
		if !regexp.MustCompile(`^[A-Za-z0-9/._+-]+$`).MatchString(p) {
			t.Fatalf("path %q does not fit in a traphandle line unquoted", p)
		}
	}
	handle := fmt.Sprintf("traphandle default %s MIBDIRS=%s MIBS=SUBAGENT-MIB %s --ini=%s", envPath, strings.Join(mibDirs, ":"), snmptt, ini)
	s := snmpdtest.Start(t, snmpdtest.Options{})
	trapd := snmpdtest.StartTrapdWith(t, snmpdtest.TrapdOptions{Config: []string{handle}})
	logPath := filepath.Join(dir, "snmptt.log")
	t.Cleanup(func() {
		if t.Failed() {
			unknown, _ := os.ReadFile(filepath.Join(dir, "snmpttunknown.log"))
			out, _ := os.ReadFile(filepath.Join(filepath.Dir(trapd.LogPath), "snmptrapd.out"))
			got, _ := os.ReadFile(logPath)
			t.Logf("SNMPTT log:\n%s\nunknown traps:\n%s\nsnmptrapd log:\n%s\nsnmptrapd (and snmptt) output:\n%s", got, unknown, trapd.Log(), out)
		}
	})
	// wait polls SNMPTT's log until event has n lines (bounded).
	wait := func(event string, n int, within time.Duration) [][]string {
		t.Helper()
		deadline := time.Now().Add(within)
		for {
			got, err := snmpttLog(logPath, event, events[event])
			if err != nil {
				t.Fatal(err)
			}
			if len(got) >= n {
				return got
			}
			if time.Now().After(deadline) {
				t.Fatalf("SNMPTT logged %s %d times within %v, want %d", event, len(got), within, n)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	e := newEnv(t)
	startConfigured(t, e, s, pumpAlarmYAML(trapd.Addr, "tree_changed_interval: 1s", ""))
	generation := func() int {
		t.Helper()
		vars, err := s.Get(base + ".16.1.0")
		if err != nil || len(vars) != 1 {
			t.Fatalf("snmpget the generation: %v %v", vars, err)
		}
		n, err := strconv.Atoi(vars[0].Value)
		if err != nil {
			t.Fatalf("generation %v: %v", vars[0], err)
		}
		return n
	}
	before := generation()

	sup, loads, _ := pumpSupplier(t, e)
	setLoads(sup, loads, 10, 10, 10)
	waitValue(t, e, "Hotset/pumpalarm/groups", "1", 15*time.Second)
	// treeChanged: the generation that counts the supplier, its contexts.
	var changed []string
	for deadline := time.Now().Add(15 * time.Second); changed == nil; {
		for _, vals := range wait("treeChanged", 1, 15*time.Second) {
			if strings.Contains(vals[pos("treeChanged", "treeContexts")], "+DDS/Acme/Pumps/") {
				changed = vals
			}
		}
		if changed == nil && time.Now().After(deadline) {
			t.Fatalf("no treeChanged in SNMPTT's log names +DDS/Acme/Pumps/ within 15s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if g, err := strconv.Atoi(changed[pos("treeChanged", "treeGeneration")]); err != nil || g <= before || g > generation() {
		t.Errorf("treeChanged carries generation %q, want one above %d (before the supplier), at most the served one", changed[pos("treeChanged", "treeGeneration")], before)
	}

	setLoads(sup, loads, 90, 10, 10)
	wait("hotsetTrap1", 1, 15*time.Second)
	setLoads(sup, loads, 40, 10, 10)
	cleared := wait("hotsetCleared", 1, 15*time.Second)
	// Read again: exactly one of each, the raise not repeated.
	raised := wait("hotsetTrap1", 1, 0)
	if len(raised) != 1 || len(cleared) != 1 {
		t.Fatalf("SNMPTT logged %d hotsetTrap1 and %d hotsetCleared, want one each: %q %q", len(raised), len(cleared), raised, cleared)
	}
	for _, c := range []struct {
		event string
		vals  []string
		want  map[string]string
		stat  string // the peer's served load, after the objects (maxresp 1)
	}{
		{"hotsetTrap1", raised[0], map[string]string{"hotsetName": "pumpalarm", "hotsetPeerContext": "DDS/Acme/Pumps/",
			"hotsetThreshold": "80", "hotsetSeverity": "0", "hotsetPeerName": "p1", "hotsetPeerValue": "90", "hotsetPeerList": "p1=90"}, "90"},
		{"hotsetCleared", cleared[0], map[string]string{"hotsetName": "pumpalarm", "hotsetPeerContext": "DDS/Acme/Pumps/",
			"hotsetThreshold": "80", "hotsetRearm": "50", "hotsetPeerName": "p1", "hotsetPeerValue": "40"}, "40"},
	} {
		for obj, want := range c.want {
			if p := pos(c.event, obj); p < 0 || p >= len(c.vals) || c.vals[p] != want {
				t.Errorf("%s: $%d (%s) = %q, want %q; values: %q", c.event, p+1, obj, at(c.vals, p), want, c.vals)
			}
		}
		if n := len(events[c.event].Vars); len(c.vals) != n+1 || c.vals[n] != c.stat {
			t.Errorf("%s: values %q, want the %d objects then the load %s as $%d", c.event, c.vals, n, c.stat, n+1)
		}
	}
	if unknown, _ := os.ReadFile(filepath.Join(dir, "snmpttunknown.log")); len(unknown) > 0 {
		t.Errorf("SNMPTT found no EVENT for some traps:\n%s", unknown)
	}
	if !t.Failed() {
		got, _ := os.ReadFile(logPath)
		t.Logf("SNMPTT log:\n%s", got)
	}
}

// at is vals[i], "" when i is out of range.
func at(vals []string, i int) string {
	if i < 0 || i >= len(vals) {
		return ""
	}
	return vals[i]
}
