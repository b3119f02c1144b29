package libarm

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfagent/subagent/client/armring"
)

// The C library bins response times as armring does: the daemon reads
// the bins the C library adds to.
func TestCBinsAreArmringBins(t *testing.T) {
	dir := built(t)
	bin := filepath.Join(t.TempDir(), "bins")
	// ar_bin is internal, local in libarm.a: link the library's objects.
	objs, _ := filepath.Glob(filepath.Join(dir, "*.o"))
	if err := cc(append(append([]string{"-O2", "-o", bin, "testdata/bins.c"}, objs...), "-pthread")...); err != nil {
		t.Fatal(err)
	}
	var args []string
	var want []int
	for i := range armring.NumBins {
		lo, hi := armring.BinBounds(i)
		for _, ns := range []uint64{lo, lo + 1, hi - 1, (lo + hi) / 2} {
			args = append(args, strconv.FormatUint(ns, 10))
			want = append(want, armring.Bin(ns))
		}
	}
	args = append(args, "18446744073709551615")
	want = append(want, armring.Bin(1<<64-1))
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(string(out))
	if len(got) != len(want) {
		t.Fatalf("%d bins printed for %d times", len(got), len(want))
	}
	for i, g := range got {
		if g != strconv.Itoa(want[i]) {
			t.Errorf("%s ns: C bin %s, armring.Bin %d", args[i], g, want[i])
		}
	}
}

// A tight arm_start/arm_stop loop on the smallest ring: every pair is
// counted, none lost (instances without metric values take no slot).
func TestTightLoopLosesNothingOnASmallRing(t *testing.T) {
	dir := built(t)
	d := startDaemon(t, "", armring.Geometry{Slots: 16, Apps: 2, Trans: 2})
	out, err := d.cmd(filepath.Join(dir, "pair"), "-t", "1").Output()
	if err != nil {
		t.Fatalf("pair: %v\n%s", err, out)
	}
	n, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(string(out)), "pairs "), 10, 64)
	if err != nil || n < 100000 {
		t.Fatalf("pair printed %q", out)
	}
	p := "RTime/ARM/bench/pair/"
	d.waitFor(p+"count", n)
	for name, want := range map[string]uint64{"lost": 0, "inflight": 0} {
		if v, _ := d.value(p + name); v.Uint64() != want {
			t.Errorf("%s = %v, want %d", name, v, want)
		}
	}
}
