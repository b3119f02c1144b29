package main

import (
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/mib/mibtest"
	"github.com/perfagent/subagent/mib/schema"
)

// A hotset row created through the real snmpd with hotsetDefRearm 50 and
// hotsetDefCleared true alarms as the file's rearm and cleared do: load
// past 80 raises hotsetTrap1, load back below 50 sends hotsetCleared
// naming the peer and the rearm, both at snmptrapd; Hotset/<name>/ shows
// both settings, and the file's rule refuses what it would
// (inconsistentValue, wrongValue), creating nothing.
func TestSNMPSetHotsetRearmCleared(t *testing.T) {
	mibtest.Require(t, "snmptranslate")
	trapAddr := snmpdtest.FreeUDPAddr(t)
	trapd := snmpdtest.StartTrapdWith(t, snmpdtest.TrapdOptions{Addr: trapAddr, MIBDirs: shippedDirs(t), Modules: []string{"SUBAGENT-MIB"}})
	s := writableSnmpd(t, "")
	e := newEnv(t)
	startConfigured(t, e, s, "hotset:\n  interval: 1s\n  tree_changed_interval: 0\ntraps:\n  - {address: "+trapAddr+", version: v2c, community: public}\n")
	sup, loads, _ := pumpSupplier(t, e)
	setLoads(sup, loads, 10, 10, 10)

	rearm, cleared := int(schema.HotsetDefTable.StatusArc())+1, int(schema.HotsetDefTable.StatusArc())+2
	row := func(name, rearmTo, clearedTo string) []string {
		return []string{
			hotCol(2, name), "s", "DDS/Acme/Pumps/*/load",
			hotCol(3, name), "i", "1",
			hotCol(4, name), "i", "80",
			hotCol(6, name), "i", "1", // feed none
			hotCol(7, name), "i", "3", // trap
			hotCol(9, name), "i", "1",
			hotCol(rearm, name), "i", rearmTo,
			hotCol(cleared, name), "i", clearedTo,
			hotCol(10, name), "i", "2", // volatile
			hotCol(11, name), "i", "4", // createAndGo
		}
	}
	for _, bad := range []struct{ rearm, cleared, want string }{
		{"90", "1", "inconsistentValue"}, // above the threshold
		{"0", "1", "inconsistentValue"},  // cleared without rearm
		{"50", "3", "wrongValue"},        // not a TruthValue
	} {
		if out, err := snmpset(s, writerOpts, row("badhot", bad.rearm, bad.cleared)...); err == nil || !strings.Contains(out, bad.want) {
			t.Errorf("rearm %s cleared %s: %v, want %s\n%s", bad.rearm, bad.cleared, err, bad.want, out)
		}
	}
	if st := statusOf(t, s, "badhot"); st != "noSuchInstance" {
		t.Errorf("badhot after refused sets: RowStatus %s", st)
	}

	if out, err := snmpset(s, writerOpts, row("rearmhot", "50", "1")...); err != nil {
		t.Fatalf("createAndGo with rearm and cleared: %v\n%s", err, out)
	}
	waitValue(t, e, "Hotset/rearmhot/groups", "1", 15*time.Second)
	if r, c := getValue(t, e, "Hotset/rearmhot/rearm"), getValue(t, e, "Hotset/rearmhot/cleared"); r != "50" || c != "1" {
		t.Errorf("Hotset/rearmhot/rearm %q cleared %q, want 50 and 1", r, c)
	}
	if vs, err := s.Get(hotCol(rearm, "rearmhot"), hotCol(cleared, "rearmhot")); err != nil || len(vs) != 2 || vs[0].Value != "50" || vs[1].Value != "1" {
		t.Errorf("hotsetDefRearm and hotsetDefCleared of rearmhot: %v %v, want 50 and 1", vs, err)
	}

	const raised, clearedOID = "OID: SUBAGENT-MIB::hotsetTrap1\t", "OID: SUBAGENT-MIB::hotsetCleared\t"
	setLoads(sup, loads, 90, 10, 10)
	waitCount(t, trapd, raised, 1, 15*time.Second)
	setLoads(sup, loads, 40, 10, 10)
	waitCount(t, trapd, clearedOID, 1, 15*time.Second)
	vbs := trapd.VarBinds(clearedOID)
	if len(vbs) != 1 {
		t.Fatalf("snmptrapd got %d hotsetCleared, want 1:\n%s", len(vbs), trapd.Log())
	}
	got := strings.Join(vbs[0], "\t")
	for _, want := range []string{"hotsetName.0 = STRING: rearmhot\t", "hotsetPeerName.0 = STRING: p1\t", "hotsetPeerValue.0 = STRING: 40\t", "hotsetRearm.0 = INTEGER: 50"} {
		if !strings.Contains(got, want) {
			t.Errorf("hotsetCleared lacks %q: %q", want, got)
		}
	}
}
