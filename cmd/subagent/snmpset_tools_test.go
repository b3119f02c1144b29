package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/mib/mibtest"
	"github.com/perfagent/subagent/mib/schema"
)

// roUser may read the whole tree over SNMPv3 but write nothing; noUser
// is a known SNMPv3 user whom no access entry names.
const (
	roUser = "readeruser"
	noUser = "strangeruser"
)

// A read-only SNMPv3 user's SET is refused by snmpd with noAccess (its
// VACM access entry has no write view: net-snmp 5.9.3), a user without
// any access entry's with authorizationError, and neither reaches a row;
// snmptable with the shipped module
// lists hotsetDefTable with the module's columns and names; a hotset row
// destroyed over SNMP sends no notification afterwards, while a twin row
// left in place notifies on the same crossing.
func TestSNMPSetReadOnlyUserTableAndDestroy(t *testing.T) {
	trapd := snmpdtest.StartTrapd(t)
	s := writableSnmpd(t, trapd.Addr, "createUser "+roUser+" SHA "+setAuth+" AES "+setPriv, "rouser "+roUser+" priv ."+base,
		"createUser "+noUser+" SHA "+setAuth+" AES "+setPriv)
	e := newEnv(t)
	startConfigured(t, e, s, hotsetYAML)
	sup, loads, _ := pumpSupplier(t, e)
	setLoads(sup, loads, 10, 20, 30) // below the threshold of 80
	waitValue(t, e, "Hotset/hotpumps/groups", "1", 10*time.Second)

	// The read-only user reads the table but may not write it.
	ro := []string{"-v3", "-u", roUser, "-l", "authPriv", "-a", "SHA", "-A", setAuth, "-x", "AES", "-X", setPriv}
	if out, _, err := s.Cmd(context.Background(), s.Tools.Snmpget, ro, hotCol(11, "hotpumps")); err != nil || !strings.Contains(out, "= INTEGER: 1") {
		t.Errorf("%s reading hotpumps' RowStatus: %v\n%s", roUser, err, out)
	}
	if out, err := snmpset(s, ro, hotRow("rohot", "3")...); err == nil || !strings.Contains(out, "Reason: noAccess") {
		t.Errorf("set by the read-only user %s: %v, want noAccess\n%s", roUser, err, out)
	}
	stranger := append([]string{}, ro...)
	stranger[2] = noUser
	if out, err := snmpset(s, stranger, hotRow("nohot", "3")...); err == nil || !strings.Contains(out, "Reason: authorizationError") {
		t.Errorf("set by %s, who has no access entry: %v, want authorizationError\n%s", noUser, err, out)
	}
	for _, name := range []string{"rohot", "nohot"} {
		if st := statusOf(t, s, name); st != "noSuchInstance" {
			t.Errorf("%s after a refused set: RowStatus %s", name, st)
		}
	}

	// Two twin rows in one SET, trap numbers 41 and 42.
	keep, gone := hotRow("keephot", "3"), hotRow("gonehot", "2")
	gone[len(gone)-7] = "42"
	if out, err := snmpset(s, writerOpts, append(keep, gone...)...); err != nil {
		t.Fatalf("createAndGo of keephot and gonehot: %v\n%s", err, out)
	}
	waitValue(t, e, "Hotset/keephot/groups", "1", 10*time.Second)
	waitValue(t, e, "Hotset/gonehot/groups", "1", 10*time.Second)

	checkHotsetSnmptable(t, s)

	if out, err := snmpset(s, writerOpts, hotCol(11, "gonehot"), "i", "6"); err != nil {
		t.Fatalf("destroy gonehot: %v\n%s", err, out)
	}
	if st := statusOf(t, s, "gonehot"); st != "noSuchInstance" {
		t.Errorf("gonehot after destroy: RowStatus %s", st)
	}
	setLoads(sup, loads, 85, 95, 50) // both twins' threshold crossed
	if log, err := trapd.WaitFor(15*time.Second, `"keephot"`); err != nil {
		t.Fatalf("no notification of keephot: %v\n%s", err, log)
	}
	// gonehot would have notified in the same evaluation as keephot; wait
	// two more evaluation periods (hotset.interval 1s) for a late one.
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) && len(trapd.VarBinds(`"gonehot"`)) == 0 {
		time.Sleep(100 * time.Millisecond)
	}
	if n := trapd.VarBinds(`"gonehot"`); len(n) != 0 {
		t.Errorf("%d notifications of gonehot after its destroy: %v", len(n), n)
	}
}

// checkHotsetSnmptable lists hotsetDefTable with net-snmp's snmptable and
// the shipped module: its columns are the module's, in order, and each
// row shows its values by their names. -m SUBAGENT-MIB, not +SUBAGENT-MIB:
// that would add net-snmp's default modules, which a test machine may lack
// (the IETF ones come from mibtest.BaseDirs).
func checkHotsetSnmptable(t *testing.T, s *snmpdtest.Snmpd) {
	t.Helper()
	mibs, err := filepath.Abs("../../MIBs")
	if err != nil {
		t.Fatal(err)
	}
	dirs := append(mibtest.BaseDirs(t), mibs)
	ctx, cancel := context.WithTimeout(context.Background(), snmpdtest.ToolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.Tools.Snmptable, "-v2c", "-c", s.Community, "-t", "2", "-r", "1",
		"-M", strings.Join(dirs, ":"), "-m", "SUBAGENT-MIB", "-Ci", "-Cf", "|", "udp:"+s.Addr, "SUBAGENT-MIB::hotsetDefTable")
	cmd.Env = mibtest.NetSNMPEnv(t)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil || strings.TrimSpace(stderr.String()) != "" {
		t.Fatalf("snmptable: %v\n%s%s", err, stderr.String(), out.String())
	}
	t.Logf("snmptable SUBAGENT-MIB::hotsetDefTable:\n%s", out.String())
	want := []string{"index"}
	for _, c := range schema.HotsetDefTable.Columns {
		want = append(want, c.Name)
	}
	want = append(want, schema.HotsetDefTable.StorageType, schema.HotsetDefTable.RowStatus)
	for _, c := range schema.HotsetDefTable.Added {
		want = append(want, c.Name)
	}
	rows := map[string][]string{}
	var header []string
	for _, l := range strings.Split(out.String(), "\n") {
		f := strings.Split(l, "|")
		switch {
		case len(f) < 2:
		case header == nil:
			header = f
		default:
			rows[strings.Trim(f[0], `"`)] = f
		}
	}
	if strings.Join(header, "|") != strings.Join(want, "|") {
		t.Fatalf("snmptable columns %v, want the module's %v", header, want)
	}
	// index stat maxresp threshold frequency feed excp severity trapno storage status rearm cleared
	for name, w := range map[string]string{
		"hotpumps": "DDS/Acme/Pumps/*/load|2|80|300 seconds|threshold|both|3|21|readOnly|active|0|false",
		"keephot":  "DDS/Acme/Pumps/*/load|2|80|300 seconds|threshold|trap|0|41|nonVolatile|active|0|false",
		"gonehot":  "DDS/Acme/Pumps/*/load|2|80|300 seconds|threshold|trap|0|42|volatile|active|0|false",
	} {
		if got := strings.Join(rows[name][1:], "|"); got != w {
			t.Errorf("snmptable row %s: %s, want %s", name, got, w)
		}
	}
	if len(rows) != 3 {
		t.Errorf("snmptable listed %d rows, want hotpumps, keephot and gonehot: %v", len(rows), rows)
	}
}
