package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/internal/snmpdtest"
)

// The writable tables under base.110 (daemon/snmpwrite.go).
const (
	writableOID = "1.3.6.1.4.1.32473.1.110"
	hotDefEntry = writableOID + ".1.1"
	hostEntry   = writableOID + ".2.1"
	setUser     = "setuser"
	setAuth     = "authpass123"
	setPriv     = "privpass123"
)

// nameIndex is the OID index of a name: its length, then its octets.
func nameIndex(name string) string {
	s := strconv.Itoa(len(name))
	for i := 0; i < len(name); i++ {
		s += "." + strconv.Itoa(int(name[i]))
	}
	return s
}

func hotCol(col int, name string) string {
	return fmt.Sprintf("%s.%d.%s", hotDefEntry, col, nameIndex(name))
}

// snmpset runs net-snmp's snmpset through snmpd with extra options
// (community or SNMPv3 user) and OID TYPE VALUE triples.
func snmpset(s *snmpdtest.Snmpd, opts []string, triples ...string) (string, error) {
	out, stderr, err := s.Cmd(context.Background(), s.Tools.Snmpset, opts, triples...)
	return out + stderr, err
}

var (
	writerOpts = []string{"-c", "writer"}
	v3Opts     = []string{"-v3", "-u", setUser, "-l", "authPriv", "-a", "SHA", "-A", setAuth, "-x", "AES", "-X", setPriv}
)

// hotRow is a complete hotset row with createAndGo: a trap at load above 80.
func hotRow(name, storage string) []string {
	return []string{
		hotCol(2, name), "s", "DDS/Acme/Pumps/*/load",
		hotCol(3, name), "i", "2",
		hotCol(4, name), "i", "80",
		hotCol(5, name), "i", "300",
		hotCol(6, name), "i", "2", // threshold
		hotCol(7, name), "i", "3", // trap
		hotCol(9, name), "i", "41",
		hotCol(10, name), "i", storage,
		hotCol(11, name), "i", "4", // createAndGo
	}
}

func writableSnmpd(t *testing.T, trapSink string, extra ...string) *snmpdtest.Snmpd {
	return snmpdtest.Start(t, snmpdtest.Options{TrapSink: trapSink, ExtraConfig: append([]string{
		"rwcommunity writer 127.0.0.1 ." + writableOID,
		"createUser " + setUser + " SHA " + setAuth + " AES " + setPriv,
		"rwuser " + setUser + " priv ." + writableOID,
	}, extra...)})
}

func statusOf(t *testing.T, s *snmpdtest.Snmpd, name string) string {
	t.Helper()
	vs, err := s.Get(hotCol(11, name))
	if err != nil || len(vs) != 1 {
		t.Fatalf("get RowStatus of %s: %v", name, err)
	}
	if vs[0].Value == "" {
		return vs[0].Type // noSuchInstance
	}
	return vs[0].Value
}

// Hotset rows written over SNMP through the real snmpd: createAndGo by a
// v2c community and by a v3 authPriv user limited to the writable
// subtree, the hotset evaluated and notifying, kept across restarts of
// the daemon and snmpd when nonVolatile, gone when volatile; refusals
// (read-only community, one bad varbind among five, a configured row,
// rows beyond the limit) change nothing.
func TestSNMPSetHotsetRows(t *testing.T) {
	trapd := snmpdtest.StartTrapd(t)
	s := writableSnmpd(t, trapd.Addr)
	e := newEnv(t)
	conf := strings.Replace(hotsetYAML, "  interval: 1s\n", "  interval: 1s\n  max_snmp_rows: 4\n", 1)
	file := startConfigured(t, e, s, conf)
	sup, loads, _ := pumpSupplier(t, e)
	setLoads(sup, loads, 10, 20, 30)
	waitValue(t, e, "Hotset/hotpumps/groups", "1", 10*time.Second)

	// Read-only community: snmpd refuses, nothing reaches the daemon.
	if out, err := snmpset(s, nil, hotRow("rohot", "3")...); err == nil || !strings.Contains(out, "noAccess") {
		t.Errorf("set with the read-only community: %v\n%s", err, out)
	}
	// One bad varbind (maxresp 99999) among five: nothing is created.
	bad := []string{hotCol(2, "badhot"), "s", "DDS/Acme/Pumps/*/load", hotCol(3, "badhot"), "i", "99999",
		hotCol(4, "badhot"), "i", "80", hotCol(6, "badhot"), "i", "3", hotCol(11, "badhot"), "i", "4"}
	if out, err := snmpset(s, writerOpts, bad...); err == nil || !strings.Contains(out, "wrongValue") {
		t.Errorf("bad maxresp: %v\n%s", err, out)
	}
	if st := statusOf(t, s, "badhot"); st != "noSuchInstance" {
		t.Errorf("badhot after a refused set: %s", st)
	}
	// A statistic that matches nothing: inconsistentValue, nearest path logged.
	typo := hotRow("typo", "3")
	typo[2] = "DDS/Acme/Pumps/*/lod"
	if out, err := snmpset(s, writerOpts, typo...); err == nil || !strings.Contains(out, "inconsistentValue") {
		t.Errorf("typo: %v\n%s", err, out)
	}
	if !strings.Contains(e.daemonLog.String(), "load") || !strings.Contains(e.daemonLog.String(), "hotset row refused") {
		t.Errorf("the refusal of a typo is not logged with the nearest path:\n%s", e.daemonLog)
	}
	// The configured hotset is a readOnly row that cannot be destroyed.
	if st := statusOf(t, s, "hotpumps"); st != "1" {
		t.Errorf("hotpumps RowStatus %s", st)
	}
	if out, err := snmpset(s, writerOpts, hotCol(11, "hotpumps"), "i", "6"); err == nil || !strings.Contains(out, "wrongValue") {
		t.Errorf("destroy of a configured row: %v\n%s", err, out)
	}

	// createAndGo by the v2c community and by the v3 user.
	if out, err := snmpset(s, writerOpts, hotRow("snmphot", "3")...); err != nil {
		t.Fatalf("createAndGo: %v\n%s", err, out)
	}
	v3row := hotRow("v3hot", "3")
	v3row[len(v3row)-7] = "9" // trap 9: apart from snmphot's
	if out, err := snmpset(s, v3Opts, v3row...); err != nil {
		t.Fatalf("createAndGo as %s: %v\n%s", setUser, err, out)
	}
	if out, err := snmpset(s, writerOpts, hotRow("volhot", "2")...); err != nil {
		t.Fatalf("createAndGo volatile: %v\n%s", err, out)
	}
	waitValue(t, e, "Hotset/snmphot/groups", "1", 10*time.Second)
	waitValue(t, e, "Hotset/v3hot/groups", "1", 10*time.Second)
	setLoads(sup, loads, 85, 95, 50)
	if log, err := trapd.WaitFor(15*time.Second, "snmphot"); err != nil {
		t.Errorf("no notification of snmphot: %v\n%s", err, log)
	}

	// The limit (4 rows over SNMP): the 4th is taken, then every other
	// is resourceUnavailable, and refusing 1,000 costs no memory.
	if out, err := snmpset(s, writerOpts, hotRow("fourth", "2")...); err != nil {
		t.Fatalf("4th row: %v\n%s", err, out)
	}
	before := rssKB(t, e.daemon.Process.Pid)
	for i := 0; i < 1000; i++ {
		out, err := snmpset(s, writerOpts, hotRow(fmt.Sprintf("over%d", i), "3")...)
		if err == nil || !strings.Contains(out, "resourceUnavailable") {
			t.Fatalf("row %d beyond the limit: %v\n%s", i, err, out)
		}
	}
	if after := rssKB(t, e.daemon.Process.Pid); after-before > 10*1024 {
		t.Errorf("RSS grew from %d to %d kB over 1,000 refused rows", before, after)
	}
	if out, err := snmpset(s, writerOpts, hotCol(11, "fourth"), "i", "6"); err != nil {
		t.Fatalf("destroy: %v\n%s", err, out)
	}

	// createAndWait: notReady until the statistic is set, then active.
	if out, err := snmpset(s, writerOpts, hotCol(11, "waiter"), "i", "5"); err != nil {
		t.Fatalf("createAndWait: %v\n%s", err, out)
	}
	if st := statusOf(t, s, "waiter"); st != "3" {
		t.Errorf("createAndWait without stat: %s, want notReady(3)", st)
	}
	if out, err := snmpset(s, writerOpts, hotCol(2, "waiter"), "s", "DDS/Acme/Pumps/*/load"); err != nil {
		t.Fatalf("stat: %v\n%s", err, out)
	}
	if st := statusOf(t, s, "waiter"); st != "2" {
		t.Errorf("complete row: %s, want notInService(2)", st)
	}
	if out, err := snmpset(s, writerOpts, hotCol(11, "waiter"), "i", "1"); err != nil {
		t.Fatalf("active: %v\n%s", err, out)
	}
	waitValue(t, e, "Hotset/waiter/maxresp", "0", 10*time.Second)

	// Restart the daemon and snmpd: nonVolatile rows stay, volatile go.
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	s.Restart()
	e.start("--config", file, "--agentx", s.AgentXAddress)
	waitServed(t, s, idleOID, 10*time.Second)
	for name, want := range map[string]string{"snmphot": "1", "v3hot": "1", "waiter": "1", "volhot": "noSuchInstance", "fourth": "noSuchInstance"} {
		if st := statusOf(t, s, name); st != want {
			t.Errorf("%s after restarts: RowStatus %s, want %s", name, st, want)
		}
	}
	if vs, err := s.Get(hotCol(2, "snmphot"), hotCol(10, "snmphot")); err != nil || vs[0].Value != "DDS/Acme/Pumps/*/load" || vs[1].Value != "3" {
		t.Errorf("snmphot after restarts: %v %v", vs, err)
	}
	waitValue(t, e, "Hotset/snmphot/maxresp", "2", 10*time.Second)

	// Destroy removes it from the engine too.
	if out, err := snmpset(s, writerOpts, hotCol(11, "snmphot"), "i", "6"); err != nil {
		t.Fatalf("destroy: %v\n%s", err, out)
	}
	if st := statusOf(t, s, "snmphot"); st != "noSuchInstance" {
		t.Errorf("after destroy: %s", st)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, ok := rtlGet(e, "Hotset/snmphot/maxresp"); !ok {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if v, ok := rtlGet(e, "Hotset/snmphot/maxresp"); ok {
		t.Errorf("Hotset/snmphot still served after destroy: %s", v)
	}
}

// An RTime/LAN host row created over SNMP is measured within an interval,
// `subagent delete` and SNMP see the same host, and the host keeps its
// number across restarts of the daemon and snmpd.
func TestSNMPSetRTimeLANHostRow(t *testing.T) {
	s := writableSnmpd(t, "")
	e := newEnv(t)
	file := startConfigured(t, e, s, "rtime_lan:\n  interval: 1s\n  timeout: 500ms\n  hosts: [127.0.0.1]\n")
	const host = "127.0.0.9"
	col := func(c int, name string) string { return fmt.Sprintf("%s.%d.%s", hostEntry, c, nameIndex(name)) }
	if out, err := snmpset(s, writerOpts, col(3, host), "i", "3", col(4, host), "i", "4"); err != nil {
		t.Fatalf("createAndGo host: %v\n%s", err, out)
	}
	rtlWait(t, e, "RTime/LAN/"+host+"/resptime", func(f float64) bool { return f >= 0 })
	vs, err := s.Get(col(2, host), col(3, "127.0.0.1"))
	if err != nil || len(vs) != 2 || vs[0].Value == "" || vs[1].Value != "5" {
		t.Fatalf("host number and the configured host's StorageType: %v %v", vs, err)
	}
	number := vs[0].Value
	// The configured host is readOnly.
	if out, err := snmpset(s, writerOpts, col(4, "127.0.0.1"), "i", "6"); err == nil || !strings.Contains(out, "wrongValue") {
		t.Errorf("destroy of a configured host: %v\n%s", err, out)
	}
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	s.Restart()
	e.start("--config", file, "--agentx", s.AgentXAddress)
	waitServed(t, s, idleOID, 10*time.Second)
	if vs, err := s.Get(col(2, host), col(4, host)); err != nil || len(vs) != 2 || vs[0].Value != number || vs[1].Value != "1" {
		t.Fatalf("after restarts: %v %v, want number %s active", vs, err, number)
	}
	// Deleted with the CLI, the row is gone over SNMP too.
	if _, stderr, code := e.run(append([]string{"delete", "RTime/LAN/" + host}, e.args("--config", file)...)...); code != 0 {
		t.Fatalf("delete: %s", stderr)
	}
	deadline := time.Now().Add(5 * time.Second) // the view of the rows is at most a second old
	for time.Now().Before(deadline) {
		if vs, err := s.Get(col(4, host)); err == nil && len(vs) == 1 && vs[0].Type == "noSuchInstance" {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Errorf("host row still served after subagent delete")
}
