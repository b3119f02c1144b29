package main

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/snmpdtest"
)

const collectdSnippet = "../../MIBs/collectd/subagent.conf"

// collectd's path (docs/MIB.md, collectd): the real collectd, with the
// shipped snmp plugin snippet as it is and a test-only wrapper (interval
// 1 s, the csv plugin writing into the test's directory, one Host
// collecting every Data block), walks the standalone responder on the
// fixture host; every Data block gives values, rows are named by the
// tables' name columns, and the values are what `subagent get` reads,
// Scale applied.
func TestCollectdThroughSnmpPlugin(t *testing.T) {
	collectd, pluginDir, typesDB := findCollectd(t)
	snippet, err := filepath.Abs(collectdSnippet)
	if err != nil {
		t.Fatal(err)
	}
	blocks := collectdDataBlocks(t, snippet)

	agent := fmt.Sprintf("127.0.0.1:%d", snmpdtest.FreeUDPPort(t))
	e := newEnv(t)
	e.start("--listen", agent)

	// Everything collectd and net-snmp write stays in dir: BaseDir,
	// PIDFile, the CSV files, net-snmp's persistent directory.
	dir := t.TempDir()
	base, csv, snmpDir := filepath.Join(dir, "base"), filepath.Join(dir, "csv"), filepath.Join(dir, "snmp")
	for _, d := range []string{base, csv, snmpDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// No MIB is loaded (the snippet's OIDs are numeric): no parse noise
	// from whatever MIBs the machine has.
	if err := os.WriteFile(filepath.Join(snmpDir, "snmp.conf"), []byte("mibs :\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range blocks {
		names = append(names, strconv.Quote(b.name))
	}
	conf := filepath.Join(dir, "collectd.conf")
	wrapper := fmt.Sprintf(`# Test wrapper around the shipped snippet.
Hostname "collectd-test"
FQDNLookup false
BaseDir %q
PIDFile %q
PluginDir %q
TypesDB %q
Interval 1
LoadPlugin logfile
<Plugin logfile>
  LogLevel info
  File STDOUT
</Plugin>
LoadPlugin csv
<Plugin csv>
  DataDir %q
  StoreRates false
</Plugin>
Include %q
<Plugin snmp>
  <Host "fixture">
    Address %q
    Version 2
    Community "public"
    Timeout 2
    Retries 1
    Collect %s
  </Host>
</Plugin>
`, base, filepath.Join(dir, "collectd.pid"), pluginDir, typesDB, csv, snippet, agent, strings.Join(names, " "))
	if err := os.WriteFile(conf, []byte(wrapper), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	log := &testutil.Buffer{}
	cmd := exec.CommandContext(ctx, collectd, "-f", "-C", conf)
	cmd.Dir = base
	cmd.Env = append(os.Environ(), "SNMP_PERSISTENT_DIR="+snmpDir, "SNMPCONFPATH="+snmpDir, "MIBDIRS="+snmpDir)
	cmd.Stdout, cmd.Stderr = log, log
	// Stopped by SIGTERM to its PID when the test ends (at the latest
	// after two minutes), SIGKILLed 5 s later if still there; it dies
	// with the test binary, whatever ends that.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cancel()
		<-exited
		if t.Failed() {
			t.Logf("collectd log, last lines:\n%s", testutil.Tail(log.String(), 40))
		}
	})

	// Every Data block gives a value list per row (a Table) or one.
	host := filepath.Join(csv, "fixture")
	var missing []string
	deadline := time.Now().Add(30 * time.Second)
	for {
		missing = missing[:0]
		for _, b := range blocks {
			if len(csvFiles(host, b.plugin+"*", b.file())) == 0 {
				missing = append(missing, fmt.Sprintf("%s (%s/%s)", b.name, b.plugin, b.file()))
			}
		}
		if len(missing) == 0 {
			break
		}
		select {
		case <-exited:
			t.Fatalf("collectd exited before writing %v:\n%s", missing, log)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no values within 30s from the Data blocks %v", missing)
		}
	}

	// Rows are named by the name columns: this host's processors, disks,
	// interfaces and file systems; CPU/total is no row.
	for _, w := range []struct{ glob, file string }{
		{"cpu-cpu0", "cpu-idle"}, {"cpu-cpu3", "cpu-idle"}, {"disk-sda", "disk_ops"}, {"disk-sdb", "disk_ops"},
		{"interface-eth0", "if_octets"}, {"interface-lo", "if_octets"}, {"df-root", "bytes-size"}, {"df-home", "bytes-size"},
	} {
		if len(csvFiles(host, w.glob, w.file)) == 0 {
			t.Errorf("no %s/%s", w.glob, w.file)
		}
	}
	if got := csvFiles(host, "cpu-total", "cpu-idle"); len(got) != 0 {
		t.Errorf("CPU/total is a row: %v", got)
	}

	type check struct {
		dir, file, column string // column "" is the only value
		path              string
		factor, tol       float64
	}
	checks := []check{
		{"cpu-cpu0", "cpu-idle", "", "CPU/cpu0/idle", 1, 0},
		{"cpu-cpu1", "cpu-system", "", "CPU/cpu1/kern", 1, 0},
		{"cpu-cpu2", "cpu-interrupt", "", "CPU/cpu2/irq", 1, 0},
		{"disk-sda", "disk_ops", "read", "Disk/sda/reads", 1, 0},
		{"disk-sda", "disk_ops", "write", "Disk/sda/writes", 1, 0},
		{"disk-sda", "pending_operations", "", "Disk/sda/qlen", 1, 0},
		{"disk-sdb", "derive-rblk", "", "Disk/sdb/rblk", 1, 0},
		{"interface-eth0", "if_octets", "rx", "LAN/eth0/ibyte", 1, 0},
		{"interface-eth0", "if_octets", "tx", "LAN/eth0/obyte", 1, 0},
		{"df-root", "bytes-size", "", "FS/root/size", 1024, 0},
		{"df-root", "df_complex-free", "", "FS/root/avail", 1024, 0},
		{"df-home", "percent-used", "", "FS/home/%used", 1, 0.005},
		{"df-root", "df_inodes-free", "", "FS/root/ifree", 1, 0},
		{"df-root", "percent_inodes-used", "", "FS/root/%iused", 1, 0.005},
		{"memory", "memory-free", "", "Mem/Real/free", 1024, 0},
		{"memory", "percent-free", "", "Mem/Real/%free", 1, 0.005},
		{"load", "load", "shortterm", "Proc/loadavg1", 1, 0.005},
		{"load", "load", "longterm", "Proc/loadavg15", 1, 0.005},
	}
	compareWithGet(t, e, checks, func(c check) string { return c.path }, func(c check, want float64) {
		v, err := lastCSVValue(csvFiles(host, c.dir, c.file), c.column)
		if err != nil {
			t.Errorf("%s/%s: %v", c.dir, c.file, err)
			return
		}
		if far(v, want*c.factor, c.tol) {
			t.Errorf("%s/%s %s = %v, subagent get %s = %v (×%v)", c.dir, c.file, c.column, v, c.path, want, c.factor)
		}
	})
	// Scale is applied: a percentage, not the integer on the wire.
	if v, err := lastCSVValue(csvFiles(host, "memory", "percent-free"), ""); err == nil && (v <= 0 || v > 100) {
		t.Errorf("memory/percent-free %v is not a percentage", v)
	}
}

// compareWithGet reads the statistic path(c) of each check c with
// `subagent get` and calls compare with c and the value read, which a
// tool's value must match; a path get did not answer is reported (by
// getFloats) and passed over.
func compareWithGet[C any](t *testing.T, e *env, checks []C, path func(C) string, compare func(c C, want float64)) {
	t.Helper()
	var paths []string
	for _, c := range checks {
		paths = append(paths, path(c))
	}
	got := getFloats(t, e, paths...)
	for _, c := range checks {
		if v, ok := got[path(c)]; ok {
			compare(c, v)
		}
	}
}

// far says whether v stands further from want than tol (and a float's
// rounding).
func far(v, want, tol float64) bool { return math.Abs(v-want) > tol+1e-9*math.Abs(want) }

// findCollectd returns collectd, its plugin directory and its types.db,
// or skips the test naming what is missing (make test-deps installs
// Debian's collectd-core).
func findCollectd(t *testing.T) (bin, pluginDir, typesDB string) {
	t.Helper()
	bin, err := exec.LookPath("collectd")
	if err != nil {
		bin = "/usr/sbin/collectd"
	}
	var missing []string
	if _, err := os.Stat(bin); err != nil {
		missing = append(missing, "the collectd daemon (/usr/sbin/collectd)")
	}
	pluginDir = "/usr/lib/collectd"
	for _, p := range []string{"snmp.so", "csv.so", "logfile.so"} {
		if _, err := os.Stat(filepath.Join(pluginDir, p)); err != nil {
			missing = append(missing, "its plugin "+filepath.Join(pluginDir, p))
		}
	}
	typesDB = "/usr/share/collectd/types.db"
	if _, err := os.Stat(typesDB); err != nil {
		missing = append(missing, typesDB)
	}
	if len(missing) > 0 {
		t.Skipf("collectd is not installed: missing %s; install Debian's collectd-core (make test-deps does as root)", strings.Join(missing, ", "))
	}
	return bin, pluginDir, typesDB
}

// collectdData is what a Data block of the snippet makes collectd write:
// <host>/<plugin>[-<row name>]/<type>[-<type instance>]-<date>.
type collectdData struct {
	name, plugin, typ, typeInstance string
}

func (d collectdData) file() string {
	if d.typeInstance == "" {
		return d.typ
	}
	return d.typ + "-" + d.typeInstance
}

// collectdDataBlocks reads the Data blocks of a collectd snippet.
func collectdDataBlocks(t *testing.T, path string) []collectdData {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []collectdData
	var cur *collectdData
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(strings.TrimSpace(sc.Text()), "#")
		key, val, _ := strings.Cut(strings.TrimSpace(line), " ")
		val = strings.Trim(strings.TrimSpace(val), `">`)
		switch {
		case key == "<Data":
			cur = &collectdData{name: val, plugin: "snmp"}
		case key == "</Data>":
			out = append(out, *cur)
			cur = nil
		case cur == nil:
		case key == "Plugin":
			cur.plugin = val
		case key == "Type":
			cur.typ = val
		case key == "TypeInstance":
			cur.typeInstance = val
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) < 20 {
		t.Fatalf("%s: %d Data blocks", path, len(out))
	}
	return out
}

// csvFiles are the csv plugin's files of a value list, one per day,
// oldest first: <host>/<dirGlob>/<file>-YYYY-MM-DD.
func csvFiles(host, dirGlob, file string) []string {
	m, _ := filepath.Glob(filepath.Join(host, dirGlob, file+"-[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]"))
	var out []string
	for _, p := range m {
		// A file with a whole value line after its header.
		if b, err := os.ReadFile(p); err == nil && strings.Count(string(b), "\n") >= 2 {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// lastCSVValue is the newest value of column (the only one when "") in
// the csv plugin's files: a header "epoch,<columns>", then
// "<time>,<values>" lines.
func lastCSVValue(files []string, column string) (float64, error) {
	if len(files) == 0 {
		return 0, fmt.Errorf("no file")
	}
	b, err := os.ReadFile(files[len(files)-1])
	if err != nil {
		return 0, err
	}
	// Only whole lines: collectd may be writing the next one.
	text := string(b)
	lines := strings.Split(strings.TrimSpace(text[:strings.LastIndexByte(text, '\n')+1]), "\n")
	header := strings.Split(lines[0], ",")
	i := 1
	if column != "" {
		if i = slices.Index(header, column); i < 1 {
			return 0, fmt.Errorf("no column %q in %q", column, lines[0])
		}
	} else if len(header) != 2 {
		return 0, fmt.Errorf("%d columns in %q, want one", len(header)-1, lines[0])
	}
	f := strings.Split(lines[len(lines)-1], ",")
	if len(f) != len(header) {
		return 0, fmt.Errorf("line %q does not match header %q", lines[len(lines)-1], lines[0])
	}
	return strconv.ParseFloat(f[i], 64)
}
