package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/mib/mibtest"
)

// cpu0User is CPU/cpu0/user, in 1/100 s: base.CPU(1).cpu0(1).user(1).
const cpu0User = base + ".1.1.1.0"

// hostStat is a copy of the fixture /proc whose stat file the test
// rewrites, as the kernel would: cpu0's user time set to a value of the
// test's.
type hostStat struct {
	proc, file string
	orig       []string
}

func newHostStat(t *testing.T, e *env) *hostStat {
	t.Helper()
	proc := filepath.Join(t.TempDir(), "proc")
	testutil.CopyTree(t, e.proc, proc)
	e.proc = proc
	b, err := os.ReadFile(filepath.Join(proc, "stat"))
	if err != nil {
		t.Fatal(err)
	}
	return &hostStat{proc: proc, file: filepath.Join(proc, "stat"), orig: strings.Split(string(b), "\n")}
}

// setUser makes cpu0's user time v, replacing the file whole.
func (h *hostStat) setUser(t *testing.T, v uint64) {
	t.Helper()
	lines := append([]string(nil), h.orig...)
	f := strings.Fields(lines[1])
	if f[0] != "cpu0" {
		t.Fatalf("stat line 2 is %q, not cpu0's", lines[1])
	}
	f[1] = strconv.FormatUint(v, 10)
	lines[1] = strings.Join(f, " ")
	tmp := h.file + ".new"
	if err := os.WriteFile(tmp, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, h.file); err != nil {
		t.Fatal(err)
	}
}

// A manager reads what the host shows now, whatever its polling period:
// under the shipped refresh settings, a poll that comes longer than
// min_age after the last read returns what /proc/stat holds at that
// moment, not what it held at the poll before, through the standalone
// responder, through snmpd and through the control socket.
func TestPollsReadTheHostNow(t *testing.T) {
	s := snmpdtest.Start(t, snmpdtest.Options{})
	addr := fmt.Sprintf("127.0.0.1:%d", snmpdtest.FreeUDPPort(t))
	e := newEnv(t)
	host := newHostStat(t, e)
	e.start("--agentx", s.AgentXAddress, "--listen", addr)
	waitServed(t, s, idleOID, 10*time.Second)
	standalone := snmpdtest.Target(t, addr, "public")
	snmpGet := func(c *snmpdtest.Snmpd) func() string {
		return func() string {
			v, err := c.Get(cpu0User)
			if err != nil || len(v) != 1 {
				t.Fatalf("snmpget: %v %v", v, err)
			}
			return v[0].Value
		}
	}
	readers := []struct {
		name string
		snmp bool // waits at most refresh.snmp_wait for a reading
		get  func() string
	}{
		{"standalone", true, snmpGet(standalone)},
		{"snmpd", true, snmpGet(s)},
		{"control socket", false, func() string {
			out, stderr, code := e.run(append([]string{"get", "CPU/cpu0/user"}, e.args()...)...)
			f := strings.Fields(out)
			if code != 0 || len(f) < 2 {
				t.Fatalf("get: exit %d %s%s", code, out, stderr)
			}
			return f[1]
		}},
	}
	// refresh.snmp_wait's default: an SNMP request that waited this long
	// for a reading is answered with the values it has, the reading goes
	// on, and the next request after it ends gets its values. So a poll
	// may read the old value only when it waited that long (a loaded
	// machine's slow reading); how long is not bounded above.
	const snmpWait = 500 * time.Millisecond
	v := uint64(500000)
	// Periods longer than min_age (1 s): each poll finds the values old.
	for _, period := range []time.Duration{1500 * time.Millisecond, 3 * time.Second} {
		for _, r := range readers {
			v += 1000
			want := strconv.FormatUint(v, 10)
			host.setUser(t, v)
			time.Sleep(period) // the manager's polling period
			start := time.Now()
			got := r.get()
			took := time.Since(start)
			switch {
			case got == want:
			case r.snmp && took >= snmpWait:
				t.Logf("%s polled every %v: the reading outlasted snmp_wait (the poll took %v); the next polls must get it", r.name, period, took)
				testutil.Eventually(t, r.name+" to serve the reading it started", time.Minute, func() bool { return r.get() == want })
			default:
				t.Errorf("%s polled every %v: read %s in %v while the host shows %d", r.name, period, got, took, v)
			}
		}
	}
}

// Rates that Prometheus computes from two scrapes of the real
// snmp_exporter are the host's: each scrape carries the counter as
// /proc/stat holds it at the scrape, standalone and through snmpd.
func TestExporterScrapesReadTheHostNow(t *testing.T) {
	ex := mibtest.InstallExporter(t)
	mibs, err := filepath.Abs("../../MIBs")
	if err != nil {
		t.Fatal(err)
	}
	snmpYml := ex.Generate(t, append(mibtest.BaseDirs(t), mibs), filepath.Join(mibs, "snmp_exporter", "generator.yml"))
	s := snmpdtest.Start(t, snmpdtest.Options{Community: "public"})
	agent := fmt.Sprintf("127.0.0.1:%d", snmpdtest.FreeUDPPort(t))
	e := newEnv(t)
	host := newHostStat(t, e)
	e.start("--agentx", s.AgentXAddress, "--listen", agent)
	waitServed(t, s, idleOID, 10*time.Second)

	web, log := startExporter(t, ex, snmpYml)
	cpu0 := func(target string) (float64, error) {
		body, err := scrape("http://" + web + "/snmp?target=" + target + "&module=subagent&auth=public_v2")
		if err != nil {
			return 0, err
		}
		_, series, err := parseExposition(body)
		if err != nil {
			return 0, err
		}
		got := find(series, "cpuUser", map[string]string{"cpuName": "cpu0"})
		if len(got) != 1 {
			return 0, fmt.Errorf("%d cpuUser series of cpu0", len(got))
		}
		return got[0].value, nil
	}
	testutil.Eventually(t, "the exporter to answer", 20*time.Second, func() bool { _, err := cpu0(agent); return err == nil })

	v := uint64(700000)
	for _, target := range []struct{ name, addr string }{{"standalone", agent}, {"snmpd", s.Addr}} {
		var seen []float64
		for range 3 {
			v += 4321
			host.setUser(t, v)
			time.Sleep(1500 * time.Millisecond) // the scrape interval, longer than min_age
			got, err := cpu0(target.addr)
			if err != nil {
				t.Fatalf("%s: %v\nexporter:\n%s", target.name, err, log)
			}
			if got != float64(v) {
				t.Errorf("%s scrape: cpuUser{cpu0} %v while the host shows %d", target.name, got, v)
			}
			seen = append(seen, got)
		}
		if t.Failed() {
			t.Logf("%s scrapes: %v", target.name, seen)
		}
	}
}
