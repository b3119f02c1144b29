package libarm

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfagent/subagent/client/armring"
	"github.com/perfagent/subagent/rtimearm"
	"github.com/perfagent/subagent/rtimearm/armtest"
)

// BenchmarkCStartStop is one arm_start plus arm_stop of the C library
// against a daemon's server draining in the background: with the shipped
// ring and drain interval, and tuned (64 Ki slots, 1 ms). The C program
// times its own loop (ns/pair); ns/op also counts its start-up.
func BenchmarkCStartStop(b *testing.B) {
	dir := built(b)
	o := armtest.Options{Geometry: armring.Geometry{Apps: 2, Trans: 2}, Limits: rtimearm.Limits{MaxApps: 16, MaxTrans: 64}}
	armtest.StartStop(b, o, func(b *testing.B, d *armtest.Daemon) { benchCStartStop(b, dir, d.Dir) })
}

func benchCStartStop(b *testing.B, dir, run string) {
	b.ResetTimer()
	c := cmdIn(run, filepath.Join(dir, "pair"), strconv.Itoa(b.N))
	out, err := c.Output()
	if err != nil {
		b.Fatal(err)
	}
	ns, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		b.Fatalf("pair printed %q", out)
	}
	b.ReportMetric(ns, "ns/pair")
}

// BenchmarkPCPMMVCounter is the floor beside BenchmarkCStartStop: one
// counter update through PCP's memory-mapped values (libpcp-mmv1-dev and
// libpcp3-dev must be installed).
func BenchmarkPCPMMVCounter(b *testing.B) {
	if _, err := os.Stat("/usr/include/pcp/mmv_stats.h"); err != nil {
		b.Skip("PCP's MMV headers are not installed (apt-get install libpcp-mmv1-dev libpcp3-dev)")
	}
	dir := b.TempDir()
	bin := filepath.Join(dir, "pcpbench")
	if err := cc("-O2", "-o", bin, "testdata/pcpbench.c", "-lpcp_mmv", "-lpcp"); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "mmv"), 0o755); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	c := exec.Command(bin, "mmv", strconv.Itoa(b.N))
	c.Env = append(os.Environ(), "PCP_TMP_DIR="+dir)
	out, err := c.Output()
	if err != nil {
		b.Fatalf("pcpbench: %v", err)
	}
	ns, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		b.Fatalf("pcpbench printed %q", out)
	}
	b.ReportMetric(ns, "ns/update")
}
