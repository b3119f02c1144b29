package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/daemon"
	"github.com/perfagent/subagent/internal/snmpdtest"
)

const (
	sysGroup  = "1.3.6.1.2.1.1"
	snmpGroup = "1.3.6.1.2.1.11" // SNMPv2-MIB snmp group, served since SNMPv3
)

// The standalone responder serves the SNMPv2-MIB system group for
// discovery: sysObjectID and sysORID are the base OID, sysName the host
// name, sysContact and sysLocation from the configuration (reloaded on
// SIGHUP); walks go from it through the snmp group into the tree in OID
// order. SNMPv1 managers
// (net-snmp and gosnmp) get noSuchName at the index of a Counter64 and
// never see one in a walk, while v2c still does.
func TestStandaloneSystemGroup(t *testing.T) {
	addr := snmpdtest.FreeUDPAddr(t)
	file := filepath.Join(t.TempDir(), "subagent.yaml")
	write := func(contact string) {
		t.Helper()
		y := "snmp:\n  sys_contact: " + contact + "\n  sys_location: rack 4, row B\n"
		if err := os.WriteFile(file, []byte(y), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("ops@example.org")
	e := newEnv(t)
	e.start("--config", file, "--listen", addr, "--community", "perf")
	c := snmpdtest.Target(t, addr, "perf")
	waitServed(t, c, idleOID, 10*time.Second)

	walk, err := c.Walk(sysGroup)
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	got := map[string]snmpdtest.Var{}
	for _, v := range walk {
		got[strings.TrimPrefix(v.OID, sysGroup+".")] = v
	}
	for o, want := range map[string]string{
		"2.0": "OID " + base, "4.0": "STRING ops@example.org", "5.0": "STRING " + host,
		"6.0": "STRING rack 4, row B", "7.0": "INTEGER 72", "8.0": "Timeticks 0", "9.1.2.1": "OID " + base,
	} {
		if v := got[o]; v.Type+" "+v.Value != want {
			t.Errorf("%s.%s = %s %q, want %s", sysGroup, o, v.Type, v.Value, want)
		}
	}
	if v := got["1.0"]; !strings.HasPrefix(v.Value, "subagent "+daemon.Version+" Linux ") {
		t.Errorf("sysDescr %q", v.Value)
	}
	if v := got["9.1.3.1"]; !strings.HasPrefix(v.Value, "SUBAGENT-MIB: ") {
		t.Errorf("sysORDescr %q", v.Value)
	}
	if v := got["3.0"]; v.Type != "Timeticks" || v.Value == "" {
		t.Errorf("sysUpTime %v", v)
	}
	if len(walk) != 11 {
		t.Errorf("system group has %d objects, want 11: %v", len(walk), walk)
	}
	// sysUpTime goes on.
	testutil.Eventually(t, "sysUpTime to advance", 5*time.Second, func() bool {
		v, err := c.Get(sysGroup + ".3.0")
		return err == nil && len(v) == 1 && atof(v[0].Value) > atof(got["3.0"].Value)
	})

	// After the last object of the system group comes the snmp group
	// (snmpInPkts first), after its last (snmpProxyDrops) the notification
	// log (NOTIFICATION-LOG-MIB, mib-2 92), and after that the tree, in v1
	// too.
	for _, ver := range []string{"-v2c", "-v1"} {
		for _, step := range []struct{ after, want, what string }{
			{sysGroup + ".9.1.4.1", snmpGroup + ".1.0", "snmpInPkts"},
			{snmpGroup + ".32.0", "1.3.6.1.2.1.92.1.1.1.0", "nlmConfigGlobalEntryLimit"},
			{"1.3.6.1.2.1.92.2", base + ".", "the tree's first object"},
		} {
			out, _, err := c.Cmd(t.Context(), c.Tools.Snmpgetnext, []string{ver}, step.after)
			v, _ := snmpdtest.Parse(out)
			if err != nil || len(v) != 1 || !strings.HasPrefix(v[0].OID, step.want) {
				t.Errorf("%s GetNext after %s: %v %v, want %s", ver, step.after, v, err, step.what)
			}
		}
	}

	// SNMPv1 (RFC 3584): a Counter64 is noSuchName with its index; the
	// same Get in v2c answers it.
	g := &gosnmp.GoSNMP{Target: "127.0.0.1", Port: uint16(portOf(t, addr)), Community: "perf",
		Version: gosnmp.Version1, Timeout: 5 * time.Second, Retries: 1}
	if err := g.Connect(); err != nil {
		t.Fatal(err)
	}
	defer g.Conn.Close()
	p, err := g.Get([]string{"." + sysGroup + ".5.0", "." + idleOID})
	if err != nil || p.Error != gosnmp.NoSuchName || p.ErrorIndex != 2 {
		t.Errorf("gosnmp v1 Get of sysName and a Counter64: %v, error %v index %d; want noSuchName index 2", err, p.Error, p.ErrorIndex)
	}
	_, stderr, err := c.Cmd(t.Context(), c.Tools.Snmpget, []string{"-v1"}, sysGroup+".5.0", idleOID)
	if err == nil || !strings.Contains(stderr, "(noSuchName)") || !strings.Contains(stderr, "Failed object: ."+idleOID) {
		t.Errorf("snmpget -v1 of a Counter64: %v %q", err, stderr)
	}
	if v, err := c.Get(sysGroup+".5.0", idleOID); err != nil || len(v) != 2 || v[1].Type != "Counter64" {
		t.Errorf("v2c Get of the same: %v %v", v, err)
	}
	n64, nv1 := 0, 0
	if err := g.Walk("."+base, func(pdu gosnmp.SnmpPDU) error {
		nv1++
		if pdu.Type == gosnmp.Counter64 {
			n64++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	v2, err := c.Walk(base)
	if err != nil {
		t.Fatal(err)
	}
	c64 := 0
	for _, v := range v2 {
		if v.Type == "Counter64" {
			c64++
		}
	}
	// Agent statistics may come and go between walks: compare loosely.
	if n64 != 0 || c64 == 0 || nv1 == 0 || nv1 > len(v2)-c64+20 {
		t.Errorf("gosnmp v1 walk: %d varbinds, %d Counter64; v2c walk %d with %d Counter64", nv1, n64, len(v2), c64)
	}

	// sys_contact is reloaded on SIGHUP.
	write("night-shift@example.org")
	if err := e.daemon.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "the reloaded sysContact", 10*time.Second, func() bool {
		v, err := c.Get(sysGroup + ".4.0")
		return err == nil && len(v) == 1 && v[0].Value == "night-shift@example.org"
	})
}

func portOf(t *testing.T, addr string) int {
	t.Helper()
	i := strings.LastIndexByte(addr, ':')
	return int(atof(addr[i+1:]))
}
