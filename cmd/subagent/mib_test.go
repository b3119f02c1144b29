package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/mib/mibtest"
)

// The module that `subagent mib` writes from the running daemon names every
// OID a manager's walk through snmpd returns, and net-snmp shows the scaled
// floats in decimal with it.
func TestMIBNamesALiveWalkThroughSnmpd(t *testing.T) {
	mibtest.Require(t, "snmpwalk", "snmptranslate")
	s := snmpdtest.Start(t, snmpdtest.Options{})
	e := newEnv(t)
	e.start("--agentx", s.AgentXAddress)
	waitServed(t, s, idleOID, 10*time.Second)

	dir := t.TempDir()
	module := filepath.Join(dir, "SUBAGENT-MIB.txt")
	if _, stderr, code := e.run(append([]string{"mib", "-o", module}, e.args()...)...); code != 0 {
		t.Fatalf("subagent mib: %s", stderr)
	}
	if b, _ := os.ReadFile(module); !strings.Contains(string(b), "SUBAGENT-MIB DEFINITIONS ::= BEGIN") {
		t.Fatalf("no module written:\n%.300s", b)
	}
	mibdirs := "+" + strings.Join(append(mibtest.BaseDirs(t), dir), ":")
	env := mibtest.NetSNMPEnv(t)
	out, stderr, err := mibtest.Run(t, env, "snmpwalk", "-v2c", "-c", s.Community, "-t", "2", "-r", "1",
		"-M", mibdirs, "-m", "+SUBAGENT-MIB", "udp:"+s.Addr, base)
	if err != nil {
		t.Fatalf("snmpwalk: %v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 100 {
		t.Fatalf("walk returned %d lines", len(lines))
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "SUBAGENT-MIB::") {
			t.Fatalf("walk line not resolved to a name: %q", l)
		}
	}
	// Mem/Real/%free carries value*100 on the wire; with the module,
	// net-snmp prints it with two decimals.
	pctFree := regexp.MustCompile(`(?m)^SUBAGENT-MIB::memRealPctFree\.0 = Gauge32: \d+\.\d\d percent$`)
	if !pctFree.MatchString(out) {
		t.Fatalf("Mem/Real/%%free not shown in decimal:\n%s", grepLines(out, "memReal"))
	}
	// Every name of the walk translates back to the OID it came from.
	numeric, _, err := mibtest.Run(t, env, "snmpwalk", "-v2c", "-c", s.Community, "-t", "2", "-r", "1",
		"-On", "-M", mibdirs, "-m", "+SUBAGENT-MIB", "udp:"+s.Addr, base)
	if err != nil {
		t.Fatal(err)
	}
	nlines := strings.Split(strings.TrimSpace(numeric), "\n")
	if len(nlines) != len(lines) {
		t.Fatalf("named walk %d lines, numeric walk %d", len(lines), len(nlines))
	}
	var names, oids []string
	for i, l := range lines {
		name := strings.Fields(l)[0]
		// Processes come and go between the two walks: compare the rest.
		if strings.HasPrefix(name, "SUBAGENT-MIB::procPid.") {
			continue
		}
		names = append(names, name)
		oids = append(oids, strings.Fields(nlines[i])[0])
	}
	back, stderr, err := mibtest.Run(t, env, "snmptranslate", append([]string{"-On", "-M", mibdirs, "-m", "+SUBAGENT-MIB"}, names...)...)
	if err != nil {
		t.Fatalf("snmptranslate: %v %s", err, stderr)
	}
	got := strings.Fields(back)
	if len(got) != len(oids) {
		t.Logf("snmptranslate output starts: %.400s", back)
		t.Fatalf("snmptranslate gave %d OIDs for %d names", len(got), len(oids))
	}
	for i := range got {
		if got[i] != oids[i] {
			t.Fatalf("%s translates to %s, the walk had %s", names[i], got[i], oids[i])
		}
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
