package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	client "github.com/perfagent/subagent/client/ddsclient"
	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/snmpdtest"
)

// stormYAML: one hotset over DDS/Storm/*/load, where every supplier's
// context is a peer set of its own, with a rate limit of 3 at once and
// one per 2 s (the defaults under hotset:).
func stormYAML(trapd string) string {
	return `hotset:
  interval: 1s
  exceptions: 100
  tree_changed_interval: 0
  notify_burst: 3
  notify_interval: 2s
hotsets:
  - {name: storm, stat: DDS/Storm/*/load, maxresp: 1, threshold: 50, frequency: 5m, feed_type: threshold,
     excp_type: both, severity: 1, trap_no: 5}
traps:
  - {address: ` + trapd + `, version: v2c, community: public}
`
}

// stormSupplier registers DDS/Storm/s<i>/p with load 90: a new peer set.
func stormSupplier(t *testing.T, e *env, i int) *client.Supplier {
	t.Helper()
	v := client.NewVendor("Storm", "Peer names that keep coming", 7)
	p := v.Context(fmt.Sprintf("s%d", i), "A supplier", uint32(i)).Context("p", "Its peer", 1)
	g := p.Gauge("load", "Load", 1, client.Range(0, 100))
	s, err := client.Start(v, filepath.Join(t.TempDir(), fmt.Sprintf("s%d.shm", i)), &client.Options{Socket: filepath.Join(e.runDir, "dds.sock")})
	if err != nil {
		t.Fatalf("supplier %d: %v", i, err)
	}
	s.Update(func() { g.Set(90) })
	return s
}

// A DDS supplier that keeps registering new peer names cannot drive a
// hotset into a storm: 30 new peer sets crossing over about 6 s each
// raise their event (every one evaluated and in the exceptions table),
// but snmptrapd receives at most burst + elapsed / interval notifications,
// the rest are counted as suppressed (Hotset/<name>/notifyheld and
// Agent/traps/suppressed), and a notification sent after some were held
// back carries their number in hotsetSuppressed.
func TestHotsetStormBoundedAtTheSource(t *testing.T) {
	trapAddr := snmpdtest.FreeUDPAddr(t)
	trapd := snmpdtest.StartTrapdWith(t, snmpdtest.TrapdOptions{Addr: trapAddr, MIBDirs: shippedDirs(t), Modules: []string{"SUBAGENT-MIB"}})
	e := newEnv(t)
	file := filepath.Join(t.TempDir(), "subagent.yaml")
	if err := os.WriteFile(file, []byte(stormYAML(trapAddr)), 0o600); err != nil {
		t.Fatal(err)
	}
	e.start("--config", file)
	const n = 30
	var mu sync.Mutex
	var sups []*client.Supplier
	stampEverySecond(t, func() {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range sups {
			s.Stamp()
		}
	}, func() {
		for _, s := range sups {
			s.Exit()
		}
	})
	start := time.Now()
	for i := 1; i <= n; i++ {
		s := stormSupplier(t, e, i)
		mu.Lock()
		sups = append(sups, s)
		mu.Unlock()
		time.Sleep(200 * time.Millisecond)
	}
	waitValue(t, e, "Hotset/storm/events", strconv.Itoa(n), 20*time.Second)
	elapsed := time.Since(start)
	suppressed := getValue(t, e, "Hotset/storm/notifyheld")
	held, err := strconv.Atoi(suppressed)
	if err != nil {
		t.Fatalf("Hotset/storm/notifyheld = %q", suppressed)
	}
	const trap = "hotsetName.0 = STRING: storm\t" // the shipped module declares no hotsetTrap5
	// Every event is sent or held back: wait for the sent ones.
	testutil.Eventually(t, "the notifications not held back", 10*time.Second, func() bool {
		return strings.Count(trapd.Log(), trap) >= n-held
	})
	time.Sleep(500 * time.Millisecond) // nothing more should come; a bound, not a wait for an event
	got := trapd.VarBinds(trap)
	most := 3 + int(elapsed/(2*time.Second)) + 1
	t.Logf("%d notifications received, %d held back, of %d events in %v (bound %d)", len(got), held, n, elapsed.Round(time.Millisecond), most)
	if len(got) != n-held || len(got) > most || held == 0 {
		t.Errorf("snmptrapd received %d notifications, %d held back, of %d events in %v; want %d = events - held, at most burst 3 + %v / 2s (%d)",
			len(got), held, n, elapsed, n-held, elapsed.Round(time.Second), most)
	}
	carried := 0
	for _, vbs := range got {
		for _, vb := range vbs {
			if strings.Contains(vb, "hotsetSuppressed.0 = ") {
				c, err := strconv.Atoi(vbValue(vb))
				if err != nil {
					t.Errorf("hotsetSuppressed %q", vb)
				}
				carried += c
			}
		}
	}
	if carried == 0 || carried > held {
		t.Errorf("the notifications carry %d suppressed in all; want some, at most the %d held back", carried, held)
	}
	if v := getValue(t, e, "Agent/traps/suppressed"); v != suppressed {
		t.Errorf("Agent/traps/suppressed = %s, want %s", v, suppressed)
	}
	if v := getText(t, e, fmt.Sprintf("Hotset/storm/excp/%d/group", n)); !strings.HasPrefix(v, "DDS/Storm/s") {
		t.Errorf("exception %d (every crossing recorded): group %q", n, v)
	}
	if eps := strings.Count(e.daemonLog.String(), "suppressed by its rate limit"); eps == 0 || eps > len(got)+1 {
		t.Errorf("%d log lines of suppression episodes for %d held back and %d sent; want one per episode", eps, held, len(got))
	}
	last, lerr := strconv.ParseFloat(getValue(t, e, "Agent/hotsets/evalms"), 64)
	most2, merr := strconv.ParseFloat(getValue(t, e, "Agent/hotsets/evalmaxms"), 64)
	if lerr != nil || merr != nil || most2 <= 0 || last > most2 {
		t.Errorf("Agent/hotsets/evalms %v (%v), evalmaxms %v (%v): want the last within the longest, both measured", last, lerr, most2, merr)
	}
	t.Logf("Agent/hotsets/evalms %v, evalmaxms %v", last, most2)
}
