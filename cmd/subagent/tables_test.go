package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	client "github.com/perfagent/subagent/client/ddsclient"
	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/mib/mibtest"
)

// shippedDirs is the MIB path with the shipped module, as a user loads it.
func shippedDirs(t *testing.T) []string {
	t.Helper()
	dir, err := filepath.Abs("../../MIBs")
	if err != nil {
		t.Fatal(err)
	}
	return append(mibtest.BaseDirs(t), dir)
}

// snmptable runs net-snmp's snmptable with the shipped module and returns
// the rows by index, each a map from column to value.
func snmptable(t *testing.T, target, community, table string) map[string]map[string]string {
	t.Helper()
	args := []string{"-v2c", "-c", community, "-t", "2", "-r", "1", "-M", strings.Join(shippedDirs(t), ":"), "-m", "SUBAGENT-MIB",
		"-Ci", "-Cf", "|", target, "SUBAGENT-MIB::" + table}
	out, stderr, err := mibtest.Run(t, mibtest.NetSNMPEnv(t), "snmptable", args...)
	if err != nil || strings.TrimSpace(stderr) != "" {
		t.Fatalf("snmptable %s: %v\n%s%s", table, err, stderr, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// The title, then the column names, then a line per row.
	var head []string
	rows := map[string]map[string]string{}
	for _, l := range lines {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "SNMP table") {
			continue
		}
		f := strings.Split(l, "|")
		if head == nil {
			head = f
			continue
		}
		row := map[string]string{}
		for i, v := range f {
			if i < len(head) {
				row[head[i]] = v
			}
		}
		rows[f[0]] = row
	}
	if head == nil {
		t.Fatalf("snmptable %s printed no table:\n%s", table, out)
	}
	return rows
}

// instances lists the instance names under a context, from peek.
func (e *env) instances(t *testing.T, ctx string) []string {
	t.Helper()
	out, stderr, code := e.run(append([]string{"peek", ctx}, e.args()...)...)
	if code != 0 {
		t.Fatalf("peek %s: %s", ctx, stderr)
	}
	re := regexp.MustCompile(`^` + regexp.QuoteMeta(ctx) + `([^/]+)/\s`)
	var names []string
	for _, l := range strings.Split(out, "\n") {
		if m := re.FindStringSubmatch(l); m != nil {
			names = append(names, m[1])
		}
	}
	return names
}

// The CPU, Disk and Proc tables through snmpd and through the standalone
// responder: one row per instance, with its name.
func TestTablesWithSnmptable(t *testing.T) {
	mibtest.Require(t, "snmptable")
	s := snmpdtest.Start(t, snmpdtest.Options{})
	addr := fmt.Sprintf("127.0.0.1:%d", snmpdtest.FreeUDPPort(t))
	e := newEnv(t)
	e.start("--agentx", s.AgentXAddress, "--listen", addr)
	waitServed(t, s, idleOID, 10*time.Second)
	for _, target := range []struct{ addr, community string }{{"udp:" + s.Addr, s.Community}, {"udp:" + addr, "public"}} {
		for _, c := range []struct{ ctx, table, name, stat string }{
			{"CPU/", "cpuTable", "cpuName", "cpuIdle"},
			{"Disk/", "diskTable", "diskName", "diskBusy"},
			{"Proc/pid/", "procPidTable", "index", "procPidState"}, // named by their PID, the index
		} {
			// CPU/total sums the rows: scalars, no row of its own.
			want := slices.DeleteFunc(e.instances(t, c.ctx), func(n string) bool { return c.ctx+n == "CPU/total" })
			if len(want) < 2 {
				t.Fatalf("only %v under %s", want, c.ctx)
			}
			rows := snmptable(t, target.addr, target.community, c.table)
			var got []string
			for _, r := range rows {
				got = append(got, r[c.name])
				if v := r[c.stat]; v == "" || v == "?" {
					t.Errorf("%s %s row %v: no %s", target.addr, c.table, r, c.stat)
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s %s: rows named %v, instances %v", target.addr, c.table, got, want)
			}
		}
	}
	// A row's cell is its scalar's value: cpu0's idle time both ways.
	cpu := snmptable(t, "udp:"+addr, "public", "cpuTable")
	out, _, _ := e.run(append([]string{"get", "CPU/cpu0/idle"}, e.args()...)...)
	if f := strings.Fields(out); len(f) < 2 || !strings.HasPrefix(cpu["1"]["cpuIdle"], f[1]+" ") {
		t.Errorf("cpuIdle.1 = %q, get CPU/cpu0/idle says %q", cpu["1"]["cpuIdle"], out)
	}
}

// The shipped module names every OID of a walk of this host (its real
// /proc and /sys) through snmpd: table cells as column.index, scalars as
// their own names or their context's with numbers.
func TestShippedModuleNamesALiveWalkOfThisHost(t *testing.T) {
	mibtest.Require(t, "snmpwalk")
	s := snmpdtest.Start(t, snmpdtest.Options{})
	e := newEnv(t)
	e.proc, e.sys = "/proc", "/sys"
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	// What the shipped module describes: the host, Agent, hotsets.
	os.WriteFile(cfg, []byte("dds:\n  enabled: false\narm:\n  enabled: false\nrtime_lan:\n  enabled: false\n"), 0o644)
	e.start("--agentx", s.AgentXAddress, "--config", cfg)
	waitServed(t, s, idleOID, 10*time.Second)
	shipped, err := os.ReadFile("../../MIBs/SUBAGENT-MIB.txt")
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^(\w+) (OBJECT-TYPE|OBJECT-IDENTITY)$`).FindAllStringSubmatch(string(shipped), -1) {
		declared[m[1]] = m[2]
	}
	args := []string{"-v2c", "-c", s.Community, "-t", "2", "-r", "1", "-M", strings.Join(shippedDirs(t), ":"), "-m", "SUBAGENT-MIB", "-Oqs", "udp:" + s.Addr, base}
	out, stderr, err := mibtest.Run(t, mibtest.NetSNMPEnv(t), "snmpwalk", args...)
	if err != nil || strings.TrimSpace(stderr) != "" {
		t.Fatalf("snmpwalk: %v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 500 {
		t.Fatalf("walk of this host returned %d lines", len(lines))
	}
	cells := 0
	for _, l := range lines {
		name, _, _ := strings.Cut(l, " ")
		obj, rest, _ := strings.Cut(name, ".")
		switch declared[obj] {
		case "OBJECT-TYPE": // a scalar (.0) or a column with its index
			if strings.Count(rest, ".") > 1 || rest == "" {
				t.Errorf("%q: %s with %q after it", l, obj, rest)
			}
			if rest != "0" {
				cells++
			}
		case "OBJECT-IDENTITY": // an instance's scalar: context.I.S.0
			if !regexp.MustCompile(`^\d+(\.\d+)*\.0$`).MatchString(rest) || obj == "subagentMIB" || strings.HasSuffix(obj, "Tables") {
				t.Errorf("%q: named only through %s", l, obj)
			}
		default:
			t.Errorf("%q: %s is not declared in the shipped module", l, obj)
		}
	}
	if cells < 200 {
		t.Errorf("only %d table cells in the walk", cells)
	}
}

// A supplier's level with a negative low scale value reads negative
// through snmpd, as Integer32.
func TestNegativeDDSLevelThroughSnmpd(t *testing.T) {
	s := snmpdtest.Start(t, snmpdtest.Options{})
	e := newEnv(t)
	e.start("--agentx", s.AgentXAddress)
	waitServed(t, s, idleOID, 10*time.Second)
	v := client.NewVendor("IBM", "IBM-defined Dynamic Data-Suppliers", 2)
	temp := v.Context("Board", "Board sensors", 230).Gauge("temp", "Temperature", 1, client.Range(-100, 100))
	big := v.Context("Big", "Large levels", 231).Gauge("bytes", "Bytes queued", 1, client.Range(0, 1<<40))
	small := v.Context("Small", "Small levels", 232).Gauge("items", "Items queued", 1, client.Range(0, 1000))
	sup, err := client.Start(v, filepath.Join(t.TempDir(), "shm"), &client.Options{Socket: filepath.Join(e.runDir, "dds.sock")})
	if err != nil {
		t.Fatal(err)
	}
	defer sup.Exit()
	sup.Update(func() { temp.Set(-5); big.Set(1 << 35); small.Set(7) })
	oid := base + ".99.2.230.1.0"
	waitServed(t, s, oid, 10*time.Second)
	got, err := s.Get(oid, base+".99.2.231.1.0", base+".99.2.232.1.0")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []snmpdtest.Var{{Type: "INTEGER", Value: "-5"}, {Type: "Counter64", Value: "34359738368"}, {Type: "Gauge32", Value: "7"}} {
		if got[i].Type != want.Type || got[i].Value != want.Value {
			t.Errorf("%s = %s: %s, want %s: %s", got[i].OID, got[i].Type, got[i].Value, want.Type, want.Value)
		}
	}
}
