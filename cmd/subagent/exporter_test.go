package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/mib/mibtest"
)

// Prometheus's path (docs/MIB.md): the real snmp_exporter generator turns
// the shipped MIB and generator.yml into snmp.yml, the real exporter
// scrapes the standalone responder on the fixture host, and what comes out
// has the module's names, the tables' name labels, gauges for levels and
// counters for counts, and the values `subagent get` reads, scaled.
func TestPrometheusThroughSnmpExporter(t *testing.T) {
	ex := mibtest.InstallExporter(t)
	mibs, err := filepath.Abs("../../MIBs")
	if err != nil {
		t.Fatal(err)
	}
	// MIBs alone, as docs/MIB.md runs the generator: the module and the
	// base modules it imports.
	snmpYml := ex.Generate(t, []string{mibs}, filepath.Join(mibs, "snmp_exporter", "generator.yml"))

	agent := fmt.Sprintf("127.0.0.1:%d", snmpdtest.FreeUDPPort(t))
	e := newEnv(t)
	e.start("--listen", agent)

	web, log := startExporter(t, ex, snmpYml)

	url := "http://" + web + "/snmp?target=" + agent + "&module=subagent&auth=public_v2"
	var types map[string]string
	var series []promSample
	deadline := time.Now().Add(20 * time.Second)
	for {
		body, err := scrape(url)
		if err == nil {
			types, series, err = parseExposition(body)
		}
		if err == nil && len(find(series, "cpuIdle", nil)) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no cpuIdle from %s within 20s: %v\nexporter:\n%s\ndaemon:\n%s", url, err, log, e.daemonLog)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Types: counters are counters, levels gauges (CounterBasedGauge64
	// too), scaled or not.
	for name, want := range map[string]string{
		"cpuIdle": "counter", "diskBusy": "counter", "lanIbyte": "counter", "memVirtPagein": "counter",
		"memRealPctFree": "gauge", "procLoadavg1": "gauge", "memRealFree": "gauge", "lanSpeed": "gauge",
		"fsSize": "gauge", "fsFree": "gauge", "fsPctUsed": "gauge",
	} {
		if types[name] != want {
			t.Errorf("# TYPE %s %s, want %s", name, types[name], want)
		}
	}
	// The index and name columns are labels, not metrics; instance names
	// never make metric names.
	for _, name := range []string{"cpuName", "cpuIndex", "fsMount", "cpuCpu0Idle", "fsRootSize"} {
		if _, ok := types[name]; ok {
			t.Errorf("metric %s exported", name)
		}
	}

	// Labels: the instance's name beside its number, on every row.
	for name, label := range map[string]string{"cpuIdle": "cpuName", "diskBusy": "diskName", "lanIbyte": "lanName", "fsSize": "fsMount", "procPidUsercpu": "procPidName"} {
		rows := find(series, name, nil)
		if len(rows) < 2 {
			t.Errorf("%s: %d series, want one per instance", name, len(rows))
		}
		for _, s := range rows {
			if s.labels[label] == "" || s.labels[strings.TrimSuffix(strings.TrimSuffix(label, "Mount"), "Name")+"Index"] == "" {
				t.Errorf("%s series without %s and its index: %v", name, label, s.labels)
			}
		}
	}
	// CPU/total is a scalar beside the table: a sum over the table's
	// series is the total once, as Prometheus's sum(rate(cpuIdle[1m])).
	var idle float64
	for _, r := range find(series, "cpuIdle", nil) {
		if r.labels["cpuName"] == "total" || r.labels["cpuIndex"] == "0" {
			t.Errorf("the total is a row of cpuTable: %v", r)
		}
		idle += r.value
	}
	if tot := find(series, "cpuTotalIdle", nil); len(tot) != 1 || idle < tot[0].value*0.99 || idle > tot[0].value*1.01 {
		t.Errorf("sum of cpuIdle %v, cpuTotalIdle %v: want equal within 1 %%", idle, tot)
	}
	// A process's series carry its pid and its command, on every
	// procPid metric; the command is still an info metric of its own.
	if s := find(series, "procPidName", map[string]string{"procPidIndex": "1187"}); len(s) != 1 || s[0].labels["procPidName"] != "java" || s[0].value != 1 {
		t.Errorf("procPidName of pid 1187: %v, want one series procPidName=\"java\" 1", s)
	}
	for _, name := range []string{"procPidUsercpu", "procPidRss"} {
		if s := find(series, name, map[string]string{"procPidIndex": "1187", "procPidName": "java"}); len(s) != 1 {
			t.Errorf("%s{procPidIndex=\"1187\",procPidName=\"java\"}: %d series, want 1; all: %v", name, len(s), find(series, name, nil))
		}
		for _, s := range find(series, name, nil) {
			if s.labels["procPidName"] == "" || s.labels["procPidIndex"] == "" {
				t.Errorf("%s series without the pid and the command: %v", name, s.labels)
			}
		}
	}

	// Values: what `subagent get` reads, scaled back to the unit (the
	// fixture host does not change, so counters match exactly).
	type check struct {
		metric string
		labels map[string]string
		path   string
		tol    float64
	}
	checks := []check{
		{"memRealPctFree", nil, "Mem/Real/%free", 0.005},
		{"procLoadavg5", nil, "Proc/loadavg5", 0.005},
		{"memRealFree", nil, "Mem/Real/free", 0},
		{"memVirtPagein", nil, "Mem/Virt/pagein", 0},
		{"cpuIdle", map[string]string{"cpuName": "cpu0"}, "CPU/cpu0/idle", 0},
		{"cpuUser", map[string]string{"cpuName": "cpu1"}, "CPU/cpu1/user", 0},
		{"diskRblk", map[string]string{"diskName": "sda"}, "Disk/sda/rblk", 0},
		{"fsSize", map[string]string{"fsMount": "/"}, "FS/root/size", 0},
		{"fsPctUsed", map[string]string{"fsMount": "/home"}, "FS/home/%used", 0.005},
		{"procPidRss", map[string]string{"procPidIndex": "1187", "procPidName": "java"}, "Proc/pid/1187/rss", 0},
		{"procPidUsercpu", map[string]string{"procPidIndex": "1187", "procPidName": "java"}, "Proc/pid/1187/usercpu", 0},
	}
	compareWithGet(t, e, checks, func(c check) string { return c.path }, func(c check, want float64) {
		s := find(series, c.metric, c.labels)
		if len(s) != 1 {
			t.Errorf("%s %v: %d series, want 1", c.metric, c.labels, len(s))
			return
		}
		if far(s[0].value, want, c.tol) {
			t.Errorf("%s %v = %v, subagent get %s = %v", c.metric, c.labels, s[0].value, c.path, want)
		}
	})
	// The scaled value is not the raw integer on the wire.
	if s := find(series, "memRealPctFree", nil); len(s) == 1 && (s[0].value <= 0 || s[0].value > 100) {
		t.Errorf("memRealPctFree %v is not a percentage", s[0].value)
	}
}

// startExporter runs snmp_exporter on snmpYml (and more config files:
// auths) until the test ends and returns its address and its log.
func startExporter(t *testing.T, ex mibtest.Exporter, snmpYml string, more ...string) (string, *testutil.Buffer) {
	t.Helper()
	web := freeTCPAddr(t)
	log := &testutil.Buffer{}
	args := []string{"--config.file=" + snmpYml, "--web.listen-address=" + web}
	for _, f := range more {
		args = append(args, "--config.file="+f)
	}
	cmd := exec.Command(ex.Exporter, args...)
	cmd.Stdout, cmd.Stderr = log, log
	// The exporter dies with the test binary, whatever ends it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return web, log
}

func freeTCPAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func scrape(url string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %s", resp.Status, b)
	}
	return string(b), err
}

type promSample struct {
	name   string
	labels map[string]string
	value  float64
}

func find(series []promSample, name string, labels map[string]string) []promSample {
	var out []promSample
next:
	for _, s := range series {
		if s.name != name {
			continue
		}
		for k, v := range labels {
			if s.labels[k] != v {
				continue next
			}
		}
		out = append(out, s)
	}
	return out
}

// parseExposition reads the Prometheus text format: the # TYPE lines and
// the samples (name, labels, value; no timestamps).
func parseExposition(text string) (map[string]string, []promSample, error) {
	types := map[string]string{}
	var out []promSample
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			types[f[2]] = f[3]
		}
		if line == "" || line[0] == '#' {
			continue
		}
		s := promSample{labels: map[string]string{}}
		rest := line
		if i := strings.IndexAny(line, "{ "); i < 0 {
			return nil, nil, fmt.Errorf("bad sample %q", line)
		} else {
			s.name, rest = line[:i], line[i:]
		}
		if strings.HasPrefix(rest, "{") {
			rest = rest[1:]
			for !strings.HasPrefix(rest, "}") {
				k, v, ok := strings.Cut(rest, "=\"")
				if !ok {
					return nil, nil, fmt.Errorf("bad labels in %q", line)
				}
				var b strings.Builder
				i := 0
				for ; i < len(v) && v[i] != '"'; i++ {
					if v[i] == '\\' && i+1 < len(v) {
						i++
						if v[i] == 'n' {
							b.WriteByte('\n')
							continue
						}
					}
					b.WriteByte(v[i])
				}
				if i == len(v) {
					return nil, nil, fmt.Errorf("unterminated label in %q", line)
				}
				s.labels[strings.TrimPrefix(k, ",")] = b.String()
				rest = strings.TrimPrefix(v[i+1:], ",")
			}
			rest = rest[1:]
		}
		f := strings.Fields(rest)
		if len(f) < 1 {
			return nil, nil, fmt.Errorf("no value in %q", line)
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return nil, nil, fmt.Errorf("value of %q: %v", line, err)
		}
		s.value = v
		out = append(out, s)
	}
	return types, out, nil
}
