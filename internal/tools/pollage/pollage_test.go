package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// fakeProc writes a /proc with the given stat file and returns its root.
func fakeProc(t *testing.T, stat string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "stat"), []byte(stat), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

const statFixture = `cpu  100 2 30 400 5 6 7 8 9 10
cpu0 50 1 15 200 2 3 3 4 4 5
cpu1 50 1 15 200 3 3 4 4 5 5
intr 12345
ctxt 999
`

func TestReadStatSumsTheEightTimesAndCountsProcessors(t *testing.T) {
	c, cpus, err := readStat(fakeProc(t, statFixture))
	if err != nil {
		t.Fatal(err)
	}
	if cpus != 2 {
		t.Errorf("processors: %d, want 2", cpus)
	}
	// guest and guest_nice (9, 10) are already in user and nice.
	if c.sum() != 100+2+30+400+5+6+7+8 {
		t.Errorf("sum %d, want %d", c.sum(), 100+2+30+400+5+6+7+8)
	}
	if _, _, err := readStat(fakeProc(t, "intr 1\n")); err == nil {
		t.Error("a stat file without cpu lines was read")
	}
}

func TestProcTicksCountsFieldsAfterTheCommandName(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "42"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A command name with a space and a ")" of its own.
	stat := "42 (a) b) S 1 1 1 0 -1 4194560 100 0 0 0 150 25 0 0 20 0 1 0 5 6 7\n"
	if err := os.WriteFile(filepath.Join(root, "42", "stat"), []byte(stat), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := procTicks(root, 42)
	if err != nil || got != 175 {
		t.Errorf("procTicks = %d, %v; want 175 (utime 150 + stime 25)", got, err)
	}
}

func TestMedianAndPercentile(t *testing.T) {
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median of 3 = %v, want 2", m)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median of 4 = %v, want 2.5", m)
	}
	var xs []float64
	for i := 1; i <= 20; i++ {
		xs = append(xs, float64(i))
	}
	if p := percentile(xs, 99); p != 20 {
		t.Errorf("p99 of 20 = %v, want the largest, 20", p)
	}
	if p := percentile(xs, 50); p != 10 {
		t.Errorf("p50 of 1..20 = %v, want 10 (nearest rank)", p)
	}
}

func TestBusyLeavesOutIdleAndIowait(t *testing.T) {
	var a, b [8]float64
	b[0], b[3], b[4] = 50, 40, 10 // user, idle, iowait
	if got := busy(a, b); got != 50 {
		t.Errorf("busy = %v, want 50", got)
	}
}

func TestTotalRowReadsTheTotalRowOnly(t *testing.T) {
	body := `# TYPE cpuUser counter
cpuUser{cpuIndex="0",cpuName="total"} 1.5e+06
cpuUser{cpuIndex="1",cpuName="cpu0"} 7
cpuNice{cpuIndex="0",cpuName="total"} 2
cpuKern{cpuIndex="0",cpuName="total"} 3
cpuIdle{cpuIndex="0",cpuName="total"} 4
cpuWait{cpuIndex="0",cpuName="total"} 5
cpuIrq{cpuIndex="0",cpuName="total"} 6
cpuSoftirq{cpuIndex="0",cpuName="total"} 7
cpuSteal{cpuIndex="0",cpuName="total"} 8
cpuDescr{cpuDescr="All processors together",cpuIndex="0",cpuName="total"} 1
`
	got, err := totalRow(body)
	if err != nil {
		t.Fatal(err)
	}
	want := [8]float64{1.5e6, 2, 3, 4, 5, 6, 7, 8}
	if got != want {
		t.Errorf("total row %v, want %v", got, want)
	}
	if _, err := totalRow(`cpuUser{cpuIndex="0",cpuName="total"} 1` + "\n"); err == nil {
		t.Error("a scrape without cpuNice and the others was accepted")
	}
}

// The ssCpuRaw columns chosen are those whose sum is /proc/stat's total,
// whichever way ssCpuRawSystem counts irq and softirq; a sum far from it
// is refused.
func TestChooseUCDFindsTheColumnsOfTheTotal(t *testing.T) {
	root := fakeProc(t, statFixture)
	// ucdCols: user nice system idle wait kernel interrupt softIRQ steal
	cols := func(tg *target) []int {
		var out []int
		for _, i := range tg.sumOf {
			out = append(out, ucdCols[i])
		}
		return out
	}
	apart := &target{name: "apart"}
	if err := apart.chooseUCD([]uint64{100, 2, 30, 390, 5, 0, 6, 7, 8}, root, 2); err != nil {
		t.Fatal(err)
	}
	if got, want := cols(apart), []int{50, 51, 52, 53, 54, 56, 61, 64}; !slices.Equal(got, want) {
		t.Errorf("system alone: columns %v, want %v", got, want)
	}
	within := &target{name: "within"}
	if err := within.chooseUCD([]uint64{100, 2, 30 + 6 + 7, 390, 5, 30, 6, 7, 8}, root, 2); err != nil {
		t.Fatal(err)
	}
	if got, want := cols(within), []int{50, 51, 52, 53, 54, 64}; !slices.Equal(got, want) {
		t.Errorf("system with irq and softirq: columns %v, want %v", got, want)
	}
	far := &target{name: "far"}
	if err := far.chooseUCD([]uint64{100, 2, 30, 400 + 500, 5, 0, 6, 7, 8}, root, 2); err == nil {
		t.Error("a sum 2.5 s ahead of /proc/stat was taken for its clock")
	}
}
