package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/mib/mibtest"
)

const directoryYAML = `hotset:
  tree_changed_interval: 1s
traps:
  - {address: TRAPD, version: v2c, community: public}
`

// A DDS supplier registering at run time: the directory's generation
// increases, snmptrapd gets treeChanged naming its contexts, and
// snmptable of the directory lists its statistics with their
// descriptions and OIDs; when it leaves, the same in reverse.
func TestDirectoryFollowsASupplier(t *testing.T) {
	mibtest.Require(t, "snmptable", "snmptranslate")
	s := snmpdtest.Start(t, snmpdtest.Options{})
	trapd := snmpdtest.StartTrapdWith(t, snmpdtest.TrapdOptions{MIBDirs: shippedDirs(t), Modules: []string{"SUBAGENT-MIB"}})
	e := newEnv(t)
	startConfigured(t, e, s, strings.Replace(directoryYAML, "TRAPD", trapd.Addr, 1))
	target := "udp:" + s.Addr
	generation := func() int { return treeGeneration(t, s) }
	// waitStats polls the directory until path is listed (or not, want).
	waitStats := func(path string, want bool) map[string]map[string]string {
		t.Helper()
		var rows map[string]map[string]string
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(300 * time.Millisecond) {
			rows = map[string]map[string]string{}
			for _, r := range snmptable(t, target, s.Community, "directoryStatTable") {
				rows[r["directoryStatPath"]] = r
			}
			if _, ok := rows[path]; ok == want {
				return rows
			}
			if time.Now().After(deadline) {
				t.Fatalf("directoryStatTable lists %s: %v after 20s, want %v:\n%v", path, !want, want, rows)
			}
		}
	}
	waitStats("CPU/*/idle", true)
	before := generation()
	if before < 1 {
		t.Fatalf("generation %d before the supplier, want at least 1", before)
	}

	sup := guideSupplier(t, e)
	rows := waitStats("DDS/IBM/Test/gadgets", true)
	for path, descr := range map[string]string{"DDS/IBM/Test/gadgets": "Fake counter value", "DDS/IBM/Moretest/SubTest/queue": "Another fake quantity value"} {
		r := rows[path]
		if r == nil || r["directoryStatDescr"] != descr {
			t.Errorf("directory row %s: %v, want the description %q", path, r, descr)
		}
	}
	if r := rows["DDS/IBM/Test/gadgets"]; r != nil && (r["directoryStatScalar"] != base+".99.2.220.1.0" || r["directoryStatType"] != "counter long" || r["directoryStatSyntax"] != "Counter64") {
		t.Errorf("DDS/IBM/Test/gadgets: scalar %q type %q syntax %q, want %s.99.2.220.1.0, counter long, Counter64",
			r["directoryStatScalar"], r["directoryStatType"], r["directoryStatSyntax"], base)
	}
	// A statistic of a table lists its column: a cell is column.index.
	if r := rows["Disk/*/busy"]; r == nil || r["directoryStatColumn"] == "" {
		t.Errorf("Disk/*/busy lists no table column: %v", r)
	} else if vars, err := s.GetNext(r["directoryStatColumn"]); err != nil || len(vars) != 1 || !strings.HasPrefix(vars[0].OID, r["directoryStatColumn"]+".") {
		t.Errorf("the column %s of Disk/*/busy serves no cell: %v %v", r["directoryStatColumn"], vars, err)
	}
	up := generation()
	if up <= before {
		t.Errorf("generation %d after the supplier registered, want more than %d", up, before)
	}
	const changed = "OID: SUBAGENT-MIB::treeChanged\t"
	waitCount(t, trapd, changed, 1, 15*time.Second)
	if vbs := trapd.VarBinds(changed); len(vbs) < 1 || !strings.Contains(strings.Join(vbs[0], "\t"), "+DDS/IBM/Test/") {
		t.Errorf("treeChanged does not name +DDS/IBM/Test/: %q", vbs)
	}
	cx := map[string]map[string]string{}
	for _, r := range snmptable(t, target, s.Community, "directoryContextTable") {
		cx[r["directoryContextPath"]] = r
	}
	if r := cx["DDS/IBM/Moretest/SubTest/"]; r == nil || r["directoryContextDescr"] != "Bogus Context Number 3" || r["directoryContextOid"] != base+".99.2.221.222" {
		t.Errorf("context row DDS/IBM/Moretest/SubTest/: %v", r)
	}
	if r := cx["Disk/"]; r == nil || r["directoryContextInstantiable"] != "true" || r["directoryContextInstances"] == "0" {
		t.Errorf("context row Disk/: %v, want instantiable with instances", r)
	}

	if err := sup.Exit(); err != nil {
		t.Fatal(err)
	}
	waitStats("DDS/IBM/Test/gadgets", false)
	if g := generation(); g <= up {
		t.Errorf("generation %d after the supplier left, want more than %d", g, up)
	}
	waitCount(t, trapd, changed, 2, 15*time.Second)
	if vbs := trapd.VarBinds(changed); len(vbs) < 2 || !strings.Contains(strings.Join(vbs[len(vbs)-1], "\t"), "-DDS/IBM/Test/") {
		t.Errorf("the last treeChanged does not name -DDS/IBM/Test/: %q", vbs)
	}
}

// treeGeneration reads Directory/generation through snmpd.
func treeGeneration(t *testing.T, s *snmpdtest.Snmpd) int {
	t.Helper()
	genOID := base + ".16.1.0"
	vars, err := s.Get(genOID)
	if err != nil || len(vars) != 1 {
		t.Fatalf("snmpget %s: %v %v", genOID, vars, err)
	}
	n, err := strconv.Atoi(vars[0].Value)
	if err != nil {
		t.Fatalf("generation %s = %s %q", genOID, vars[0].Type, vars[0].Value)
	}
	return n
}
