package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	client "github.com/perfagent/subagent/client/ddsclient"
	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/mib/mibtest"
)

// treeNote is one treeChanged as snmptrapd logged it.
type treeNote struct {
	first, last, count int
	contexts           string
}

// treeNotes parses the treeChanged notifications snmptrapd logged.
func treeNotes(t *testing.T, trapd *snmpdtest.Trapd) []treeNote {
	t.Helper()
	var out []treeNote
	for _, vbs := range trapd.VarBinds("OID: SUBAGENT-MIB::treeChanged\t") {
		n := treeNote{first: -1, last: -1, count: -1}
		for _, vb := range vbs {
			name, val, _ := strings.Cut(vb, " = ")
			_, val, _ = strings.Cut(val, ": ")
			num, _ := strconv.Atoi(val)
			switch {
			case strings.Contains(name, "treeGeneration.0"):
				n.last = num
			case strings.Contains(name, "treeFirstGeneration.0"):
				n.first = num
			case strings.Contains(name, "treeChangeCount.0"):
				n.count = num
			case strings.Contains(name, "treeContexts.0"):
				n.contexts = strings.Trim(val, `"`)
			}
		}
		if n.first < 0 || n.last < n.first || n.count < 0 {
			t.Fatalf("treeChanged without its generations and count: %q", vbs)
		}
		out = append(out, n)
	}
	return out
}

// churnSupplier registers DDS/Churn/S<i> and returns the supplier.
func churnSupplier(t *testing.T, e *env, i int) *client.Supplier {
	t.Helper()
	v := client.NewVendor("Churn", "Suppliers that come and go", 40)
	c := v.Context(fmt.Sprintf("S%02d", i), "A short-lived supplier", uint32(i+1))
	c.Gauge("level", "A level", 1, client.Range(0, 100))
	s, err := client.Start(v, filepath.Join(t.TempDir(), fmt.Sprintf("churn%d.shm", i)), &client.Options{Socket: filepath.Join(e.runDir, "dds.sock")})
	if err != nil {
		t.Fatalf("supplier %d: %v", i, err)
	}
	return s
}

// With the default settings, 20 suppliers that register and leave within
// 10 s, with nobody reading the tree: the generation moves 40 times, the
// treeChanged notifications snmptrapd gets after it cover each of the 40
// generations once, counting every path, and the directory's change
// table names every supplier's context coming and going.
func TestTreeChangesSeenWhenTheyHappen(t *testing.T) {
	mibtest.Require(t, "snmptable", "snmptranslate")
	s := snmpdtest.Start(t, snmpdtest.Options{})
	trapd := snmpdtest.StartTrapdWith(t, snmpdtest.TrapdOptions{MIBDirs: shippedDirs(t), Modules: []string{"SUBAGENT-MIB"}})
	e := newEnv(t)
	startConfigured(t, e, s, "traps:\n  - {address: "+trapd.Addr+", version: v2c, community: public}\n")
	target := "udp:" + s.Addr
	generation := func() int { return treeGeneration(t, s) }
	g0 := generation()

	start := time.Now()
	for i := range 20 {
		sup := churnSupplier(t, e, i)
		if err := sup.Exit(); err != nil {
			t.Fatal(err)
		}
	}
	took := time.Since(start)
	if took > 10*time.Second {
		t.Fatalf("20 suppliers took %v to come and go, want within 10s", took)
	}
	want := g0 + 40
	for deadline := time.Now().Add(20 * time.Second); generation() < want; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("generation %d 20s after 20 suppliers came and went, want %d", generation(), want)
		}
	}
	t.Logf("20 suppliers came and went in %v; generation %d to %d %v after the first", took, g0, want, time.Since(start))

	// The change table: each supplier's context appeared, then vanished,
	// each change in a generation of its own; rows per generation.
	rows := map[int][]string{}
	for _, r := range snmptable(t, target, s.Community, "directoryChangeTable") {
		g, err := strconv.Atoi(r["directoryChangeGeneration"])
		if err != nil {
			t.Fatalf("change row %v", r)
		}
		if g > g0 {
			rows[g] = append(rows[g], r["directoryChangeOp"]+r["directoryChangePath"])
		}
	}
	paths := 0
	for g := g0 + 1; g <= want; g++ {
		if len(rows[g]) == 0 {
			t.Errorf("generation %d has no row in directoryChangeTable", g)
		}
		paths += len(rows[g])
	}
	for i := range 20 {
		cx := fmt.Sprintf("DDS/Churn/S%02d/", i)
		added, removed := 0, 0
		for g := g0 + 1; g <= want; g++ {
			for _, r := range rows[g] {
				switch r {
				case "+" + cx:
					added = g
				case "-" + cx:
					removed = g
				}
			}
		}
		if added == 0 || removed <= added {
			t.Errorf("%s: appeared in generation %d, vanished in %d; want both, in that order:\n%v", cx, added, removed, rows)
		}
	}
	if len(rows) != 40 {
		t.Errorf("rows of %d generations above %d, want 40: %v", len(rows), g0, rows)
	}

	// The notifications after g0 cover every generation to the last
	// once, and count every path of the table; the first names the first
	// supplier. The first goes at once, the next a minute later.
	var notes []treeNote
	for deadline := time.Now().Add(100 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		notes = notes[:0]
		for _, n := range treeNotes(t, trapd) {
			if n.last > g0 {
				notes = append(notes, n)
			}
		}
		if len(notes) > 0 && notes[len(notes)-1].last >= want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no treeChanged up to generation %d within 100s: %+v", want, notes)
		}
	}
	t.Logf("treeChanged after generation %d: %+v", g0, notes)
	next, counted := g0+1, 0
	for _, n := range notes {
		if n.first != next {
			t.Errorf("treeChanged covers generations %d to %d, want it to start at %d: %+v", n.first, n.last, next, notes)
		}
		next, counted = n.last+1, counted+n.count
		if len(n.contexts) > 255 {
			t.Errorf("treeContexts has %d octets", len(n.contexts))
		}
	}
	if next != want+1 || counted != paths {
		t.Errorf("treeChanged notifications cover generations to %d counting %d paths, want to %d counting %d: %+v", next-1, counted, want, paths, notes)
	}
	if !strings.Contains(notes[0].contexts, "+DDS/Churn/S00/") {
		t.Errorf("the first treeChanged does not name +DDS/Churn/S00/: %+v", notes[0])
	}
	if g := generation(); g != want {
		t.Errorf("generation %d at the end, want %d: something else changed the tree", g, want)
	}
}

const crossingYAML = `hotset:
  interval: 1s
  tree_changed_interval: 1s
hotsets:
  - {name: pumpfeed, stat: DDS/Acme/Pumps/*/load, maxresp: 3, threshold: 80, frequency: 5m, feed_type: threshold, excp_type: trap, trap_no: 1}
traps:
  - {address: TRAPD, version: v2c, community: public}
`

// A hotset crossing, whose feed rows come and go, is no tree change: the
// generation stays, and the next treeChanged (a supplier registering)
// names that supplier only.
func TestHotsetCrossingIsNoTreeChange(t *testing.T) {
	mibtest.Require(t, "snmptranslate")
	s := snmpdtest.Start(t, snmpdtest.Options{})
	trapd := snmpdtest.StartTrapdWith(t, snmpdtest.TrapdOptions{MIBDirs: shippedDirs(t), Modules: []string{"SUBAGENT-MIB"}})
	e := newEnv(t)
	startConfigured(t, e, s, strings.Replace(crossingYAML, "TRAPD", trapd.Addr, 1))
	sup, loads, _ := pumpSupplier(t, e)
	setLoads(sup, loads, 10, 10, 10)
	waitValue(t, e, "Hotset/pumpfeed/groups", "1", 15*time.Second)
	const changed = "OID: SUBAGENT-MIB::treeChanged\t"
	waitCount(t, trapd, changed, 1, 15*time.Second) // the pumps' supplier
	g0 := getValue(t, e, "Directory/generation")

	setLoads(sup, loads, 90, 95, 10)
	waitCount(t, trapd, "OID: SUBAGENT-MIB::hotsetTrap1\t", 1, 15*time.Second)
	waitValue(t, e, "Hotset/pumpfeed/count", "2", 15*time.Second)
	setLoads(sup, loads, 10, 10, 10)
	waitValue(t, e, "Hotset/pumpfeed/count", "0", 15*time.Second)
	if g := getValue(t, e, "Directory/generation"); g != g0 {
		t.Errorf("generation %s after feed rows came and went, want %s", g, g0)
	}

	// A marker: the next treeChanged covers everything since the first.
	other := churnSupplier(t, e, 0)
	defer other.Exit()
	waitCount(t, trapd, changed, 2, 15*time.Second)
	notes := treeNotes(t, trapd)
	if len(notes) != 2 {
		t.Fatalf("%d treeChanged, want 2 (the pumps, the marker): %+v", len(notes), notes)
	}
	for _, n := range notes {
		if strings.Contains(n.contexts, "Hotset/") {
			t.Errorf("treeChanged names a hotset's rows: %+v", n)
		}
	}
	if n := notes[1]; n.first != n.last || !strings.Contains(n.contexts, "+DDS/Churn/S00/") || n.count != 2 {
		t.Errorf("the marker's treeChanged %+v, want one generation adding DDS/Churn/ and DDS/Churn/S00/", n)
	}
}

// The generation never goes back: after a restart it goes on above the
// last one served.
func TestTreeGenerationGoesOnAfterRestart(t *testing.T) {
	e := newEnv(t)
	e.start()
	gen := func() int {
		t.Helper()
		var g int
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			g, _ = strconv.Atoi(getValue(t, e, "Directory/generation"))
			if g > 0 {
				return g
			}
			if time.Now().After(deadline) {
				t.Fatalf("Directory/generation %q after 20s, want a generation", getText(t, e, "Directory/generation"))
			}
		}
	}
	g1 := gen()
	for i := range 3 {
		if err := churnSupplier(t, e, i).Exit(); err != nil {
			t.Fatal(err)
		}
	}
	var g2 int
	for deadline := time.Now().Add(20 * time.Second); g2 < g1+6; time.Sleep(100 * time.Millisecond) {
		if g2 = gen(); time.Now().After(deadline) {
			t.Fatalf("generation %d after 3 suppliers came and went, want %d", g2, g1+6)
		}
	}
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	e.start()
	g3 := gen()
	if g3 <= g2 {
		t.Errorf("generation %d after a restart, want more than %d (before it)", g3, g2)
	}
	t.Logf("generation %d at the start, %d after 3 suppliers, %d after a restart", g1, g2, g3)
}
