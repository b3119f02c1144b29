package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/snmpdtest"
)

// A bulk walk of many DDS statistics through the standalone responder
// returns every one, in order, with the value each supplier holds: the
// bounded form of the million-statistic walk in make bench
// (scripts/bench-dds-walk.sh). Values are read from the suppliers' shared
// memory when each request is answered.
func TestScaleWalkOfDDSStatistics(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 100,000 statistics")
	}
	const suppliers, stats = 4, 25000
	port := snmpdtest.FreeUDPPort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	e := newEnv(t)
	e.start("--listen", addr, "--community", "perf")
	e.ddsload(t, "-suppliers", fmt.Sprint(suppliers), "-stats", fmt.Sprint(stats), "-per-context", "1000", "-every", "1h")
	c := snmpdtest.Target(t, addr, "perf")
	dds := base + ".99"
	last := fmt.Sprintf("%s.32473.%d.%d.%d.0", dds, suppliers, stats/1000, stats)
	testutil.Eventually(t, "the last supplier's last statistic served", 20*time.Second, func() bool {
		v, err := c.Get(last)
		return err == nil && len(v) == 1 && v[0].Type == "Counter64"
	})
	// snmpbulkwalk fails on an OID that does not increase.
	walk, err := c.BulkWalk(dds, 50)
	if err != nil {
		t.Fatal(err)
	}
	if len(walk) != suppliers*stats {
		t.Fatalf("walk of DDS/ returned %d values, want %d", len(walk), suppliers*stats)
	}
	for i, v := range walk {
		s, k := i/stats+1, i%stats+1
		want := fmt.Sprintf(".%d.%d.%d.0", s, (k-1)/1000+1, k)
		if !strings.HasSuffix(v.OID, want) || v.Type != "Counter64" || v.Value != "0" {
			t.Fatalf("value %d: %s = %s: %s, want ...%s = Counter64: 0", i, v.OID, v.Type, v.Value, want)
		}
	}
}
