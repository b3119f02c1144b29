//go:build linux

package libspmi

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// runBench runs test/bench.c for n updates against d and returns its
// ns/op figures by name.
func runBench(t testing.TB, d *daemon, n int) map[string]float64 {
	t.Helper()
	cmd := exec.Command(program(t, "bench", true), filepath.Join(d.RunDir, "bench.dds"), strconv.Itoa(n))
	cmd.Env = []string{"SUBAGENT_RUN_DIR=" + d.RunDir}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, out)
	}
	m := map[string]float64{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var k string
		var v float64
		if _, err := fmt.Sscan(l, &k, &v); err != nil {
			t.Fatalf("bench output %q: %v", l, err)
		}
		m[k] = v
	}
	if m["value"] != float64(n-1) {
		t.Fatalf("bench output %q: last value is not %d", out, n-1)
	}
	return m
}

// BenchmarkCSet is one value update by a C supplier: a store into the
// mapped area (ns/op), and a store plus the guide's SiShT stamp
// (ns/stamped-update).
func BenchmarkCSet(b *testing.B) {
	d := startDaemon(b, b.TempDir())
	program(b, "bench", true) // built before the clock runs
	b.ResetTimer()
	// At least 10^6 updates per run: the figure is the C loop's own.
	m := runBench(b, d, max(b.N, 1_000_000))
	b.ReportMetric(m["store"], "ns/op")
	b.ReportMetric(m["stamped"], "ns/stamped-update")
}
