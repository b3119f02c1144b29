package libarm

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/armring"
	"github.com/perfagent/subagent/config"
)

// BenchmarkCStartStop is one arm_start plus arm_stop of the C library
// against a daemon's server draining in the background: with the shipped
// ring and drain interval, and tuned (64 Ki slots, 1 ms). The C program
// times its own loop (ns/pair); ns/op also counts its start-up.
func BenchmarkCStartStop(b *testing.B) {
	c, err := config.Load(nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, v := range []struct {
		name  string
		slots int
		every time.Duration
	}{{"shipped", c.ARM.RingSlots, c.ARM.DrainInterval}, {"tuned", 1 << 16, time.Millisecond}} {
		b.Run(v.name, func(b *testing.B) { benchCStartStop(b, uint32(v.slots), v.every) })
	}
}

func benchCStartStop(b *testing.B, slots uint32, every time.Duration) {
	dir := built(b)
	run := b.TempDir()
	d := startDaemonB(b, run, armring.Geometry{Slots: slots, Apps: 2, Trans: 2})
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go d.DrainEvery(ctx, every)
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
