//go:build linux

package libspmi

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/client/consumer"
	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/control/controltest"
	"github.com/perfagent/subagent/spmi"
)

// The consumer side of libSpmi (sys/Spmidef.h) against a control server
// on the hoststats fixture (CPU total + cpu0..cpu3, fixed values) plus
// Moving/ticks, a counter that grows by 100 at every refresh, and
// Moving/level, a quantity of 42.

type movingProvider struct{ n atomic.Uint64 }

var (
	movingCx = spmi.CxDesc{Name: "Moving", Descr: "A counter that moves", ASN: 99}
	ticks    = spmiwire.StatDesc{Name: "ticks", Descr: "Grows by 100 per refresh", ASN: 1, Max: 1000, Val: ddswire.SiCounter}
	level    = spmiwire.StatDesc{Name: "level", Descr: "Always 42", ASN: 2, Max: 100, Val: ddswire.SiQuantity}
)

func (p *movingProvider) Name() string { return "Moving" }
func (p *movingProvider) Collect(b *spmi.Builder) error {
	c, err := b.Context(nil, &movingCx)
	if err != nil {
		return err
	}
	if err := b.Stat(c, &ticks, spmiwire.Uint(p.n.Add(100))); err != nil {
		return err
	}
	return b.Stat(c, &level, spmiwire.Uint(42))
}

// controlDaemon serves the fixture on a control socket in dir until its
// stop is called (or the test ends).
type controlDaemon struct {
	dir  string
	stop func()
}

func serveControl(t *testing.T, dir string) *controlDaemon {
	t.Helper()
	return &controlDaemon{dir: dir, stop: controltest.ServeFixture(t, dir, "../hoststats", &movingProvider{})}
}

func controlRunDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	return dir
}

// consumerSample builds samples/spmi/<name>.c exactly as the
// Makefile does (the guide's K&R-era ones as gnu89, warnings allowed as
// in the guide's code), with the shared or the static library: only the
// include and link lines are ours.
func consumerSample(t *testing.T, name string, static bool) string {
	t.Helper()
	lib := library(t)
	out := filepath.Join(t.TempDir(), name)
	args := []string{"-Wall", "-Wno-main", "-I" + lib.Include, "-o", out}
	if strings.HasPrefix(name, "SpmiData") {
		args = append([]string{"-std=gnu89", "-Wno-implicit-int"}, args...)
	}
	args = append(args, filepath.Join(lib.Samples, name+".c"))
	if static {
		args = append(args, filepath.Join(lib.Dir, "libSpmi.a"))
	} else {
		args = append(args, "-L"+lib.Dir, "-Wl,-rpath,"+lib.Dir, "-lSpmi")
	}
	cmd := exec.Command(lib.CC, append(append(args, lib.San...), "-pthread")...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, b)
	} else if strings.Contains(string(b), "error") {
		t.Fatalf("%s: %s", name, b)
	}
	return out
}

func runConsumer(t *testing.T, bin, runDir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "SUBAGENT_RUN_DIR="+runDir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s%s", filepath.Base(bin), err, out, stderr.String())
	}
	return string(out)
}

// The guide's traversal example lists every top-level context the daemon
// serves (as the Go client's peek of Top has them), CPU with its total
// and its four processors, and each statistic with its types.
func TestCTraversalSample(t *testing.T) {
	dir := controlRunDir(t)
	serveControl(t, dir)
	c, err := consumer.Dial(dir)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := c.Peek(t.Context(), "")
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	var top []string
	for _, e := range entries {
		if e.Stat == nil && strings.Count(e.Path, "/") == 1 {
			top = append(top, strings.TrimSuffix(e.Path, "/"))
		}
	}
	if len(top) < 10 || !slices.Contains(top, "Moving") {
		t.Fatalf("top-level contexts from Go: %v", top)
	}
	bothLibs(t, func(t *testing.T, static bool) {
		out := runConsumer(t, consumerSample(t, "SpmiDataTraverse", static), dir)
		var gotTop, cpus []string
		for _, l := range strings.Split(out, "\n") {
			f := strings.Fields(l)
			if len(f) < 2 || strings.HasPrefix(l, " ") {
				continue
			}
			if !strings.Contains(f[0], "/") {
				gotTop = append(gotTop, f[0])
			} else if strings.Count(f[0], "/") == 1 && strings.HasPrefix(f[0], "CPU/") {
				cpus = append(cpus, f[0])
			}
		}
		if !slices.Equal(gotTop, top) {
			t.Errorf("top-level contexts listed: %v, want %v", gotTop, top)
		}
		if want := []string{"CPU/total", "CPU/cpu0", "CPU/cpu1", "CPU/cpu2", "CPU/cpu3"}; !slices.Equal(cpus, want) {
			t.Errorf("CPU instances: %v, want %v", cpus, want)
		}
		for _, want := range []string{
			"Moving/ticks                            Grows by 100 per refresh\n    Data Type(Long)   Value Type(Counter)\n",
			"Mem/Real/%free                          Free memory in percent of size\n    Data Type(Float)  Value Type(Quantity)\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("traversal lacks %q", want)
			}
		}
	})
}

// The guide's data-user example prints its six statistics, last added
// first, every two seconds: the fixture's levels as they are and its
// counters (which do not move) as rates of 0; SIGTERM ends it cleanly.
// Its stdout is a terminal, which the C library line-buffers: the test
// sees each reading as it is printed.
func TestCDataUserSample(t *testing.T) {
	dir := controlRunDir(t)
	serveControl(t, dir)
	bothLibs(t, func(t *testing.T, static bool) {
		cmd := exec.Command(consumerSample(t, "SpmiDataUser", static))
		cmd.Env = append(os.Environ(), "SUBAGENT_RUN_DIR="+dir)
		master, slave := openPTY(t)
		cmd.Stdout = slave
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		slave.Close()
		var out testutil.Buffer
		copied := make(chan struct{})
		go func() { io.Copy(&out, master); close(copied) }() // ends with EIO once the sample is gone
		readings := func() [][]string {
			var rows [][]string
			for _, l := range strings.Split(out.String(), "\n") {
				if f := strings.Fields(l); len(f) == 6 && f[0] == "0.00" {
					rows = append(rows, f)
				}
			}
			return rows
		}
		eventually(t, "two readings", func() bool { return len(readings()) >= 2 })
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("SpmiDataUser: %v\n%s", err, out.String())
		}
		<-copied
		rows := readings()
		want := []string{"0.00", "0.00", "14.39", "95.00", "3.00", "1.00"}
		if len(rows) < 2 {
			t.Fatalf("readings: %q", out.String())
		}
		for _, r := range rows {
			if !slices.Equal(r, want) {
				t.Errorf("reading %v, want %v (kern, idle, Mem/Real/%%free, PagSp/%%free, runque, swpque)", r, want)
			}
		}
	})
}

// driver is a running test/consumer.c.
type driver struct{ *lineProc }

func startDriver(t testing.TB, static bool, runDir string) *driver {
	t.Helper()
	lib := library(t)
	buildMu.Lock()
	name := fmt.Sprintf("consumer-static=%v", static)
	bin, ok := programs[name]
	buildMu.Unlock()
	if !ok {
		bin = lib.Program(t, static, name, []string{"-std=c11", "-O2"}, filepath.Join(lib.Src, "test", "consumer.c"))
		buildMu.Lock()
		programs[name] = bin
		buildMu.Unlock()
	}
	return &driver{startLineProc(t, bin, "SUBAGENT_RUN_DIR="+runDir)}
}

func (d *driver) do(cmd string) string {
	d.t.Helper()
	return d.line(cmd)
}

func (d *driver) ok(cmd string) []string {
	d.t.Helper()
	return d.okLine(cmd)
}

// reading is one "read" answer: the elapsed time and, per statistic,
// val, val_change and SpmiGetValue's value.
type reading struct {
	elapsed float64
	vals    map[string][3]float64
}

func parseReading(t *testing.T, f []string) reading {
	t.Helper()
	r := reading{vals: map[string][3]float64{}}
	var err error
	if r.elapsed, err = strconv.ParseFloat(f[0], 64); err != nil {
		t.Fatal(err)
	}
	for _, v := range f[1:] {
		p := strings.Split(v, ":")
		if len(p) != 5 || p[4] != "0" {
			t.Fatalf("value %q", v)
		}
		var x [3]float64
		for i := range x {
			if x[i], err = strconv.ParseFloat(p[i+1], 64); err != nil {
				t.Fatal(err)
			}
		}
		r.vals[p[0]] = x
	}
	return r
}

// A statset of a counter and a quantity, read twice: one request per
// read, the counter's change over the time between the daemon's two
// snapshots is its rate (what `subagent get --interval` prints: the Go
// statset's Change/Elapsed), the quantity its level. The time between
// the snapshots is within what the test saw: from the end of the first
// read to the start of the second at least, from the start of the first
// to the end of the second at most.
func TestCStatSetRates(t *testing.T) {
	bothLibs(t, func(t *testing.T, static bool) {
		dir := controlRunDir(t)
		serveControl(t, dir)
		d := startDriver(t, static, dir)
		d.ok("init")
		d.ok("add Moving/ticks")
		d.ok("add Moving/level")
		d.ok("add Mem/Real/%free")
		t0 := time.Now()
		first := parseReading(t, d.ok("read"))
		t1 := time.Now()
		if first.elapsed != 0 || first.vals["Moving/ticks"][1] != 0 || first.vals["Moving/ticks"][2] != 0 {
			t.Errorf("first reading has a change or rate: %+v", first)
		}
		t2 := time.Now()
		r := parseReading(t, d.ok("read"))
		t3 := time.Now()
		tk := r.vals["Moving/ticks"]
		// One refresh between the reads (nothing else asks this daemon):
		// the counter moved by exactly 100.
		if tk[0]-first.vals["Moving/ticks"][0] != 100 || tk[1] != 100 {
			t.Errorf("counter: %v after %v, want a change of 100", tk, first.vals["Moving/ticks"])
		}
		// Printed in microseconds, cut: 1 µs less at most; and 1 ms of
		// slack for the wall clock the snapshots are stamped with.
		if lo, hi := t2.Sub(t1).Seconds()-1e-3, t3.Sub(t0).Seconds()+1e-3; r.elapsed <= 0 || r.elapsed < lo || r.elapsed > hi {
			t.Errorf("elapsed %v s, want between %v and %v (what the test saw)", r.elapsed, lo, hi)
		}
		// The rate divides by the exact elapsed time, in [printed, printed + 1 µs).
		if lo, hi := 100/(r.elapsed+1e-6), 100/r.elapsed; tk[2]*(1+1e-6) < lo || tk[2]*(1-1e-6) > hi {
			t.Errorf("rate %v, want change/elapsed, between %v and %v", tk[2], lo, hi)
		}
		if lv := r.vals["Moving/level"]; lv[0] != 42 || lv[1] != 0 || lv[2] != 42 {
			t.Errorf("quantity: %v, want level 42 and no change", lv)
		}
		if fr := r.vals["Mem/Real/%free"]; math.Abs(fr[2]-14.3876) > 1e-3 {
			t.Errorf("Mem/Real/%%free: %v", fr)
		}

		// The Go statset over the same daemon, for the same semantics.
		c, err := consumer.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ss, err := c.NewStatSet(t.Context(), "Moving/ticks", "Moving/level")
		if err != nil {
			t.Fatal(err)
		}
		ss.Read(t.Context())
		g, err := ss.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if g.Elapsed <= 0 || g.Values[0].Change != 100 || math.Abs(g.Values[0].Rate-100/g.Elapsed.Seconds()) > 1e-9 || g.Values[1].HasRate {
			t.Errorf("Go statset disagrees with the C one's rule: %+v", g)
		}
	})
}

// Every error code the guide lists for the consumer calls comes from a
// bad call (the driver's "errors"; the others of the guide's table are
// about shared memory, which a consumer here never touches).
func TestCConsumerErrors(t *testing.T) {
	bothLibs(t, func(t *testing.T, static bool) {
		dir := controlRunDir(t)
		serveControl(t, dir)
		d := startDriver(t, static, dir)
		if l := d.do("add CPU/cpu0/idle"); !strings.HasPrefix(l, "err 186 ") {
			t.Errorf("a call before SpmiInit: %q, want SiNotInit (186)", l)
		}
		d.ok("init")
		got := map[string]string{}
		for _, kv := range d.ok("errors") {
			k, v, _ := strings.Cut(kv, "=")
			got[k] = v
		}
		want := map[string]string{
			"unknown_cx":              "188", // SiNotFound
			"stat_as_cx":              "187", // SiBadArgument
			"bad_cx_handle":           "180", // SiInvalidCx
			"bad_cx_handle_first":     "180",
			"bad_stat_handle":         "187",
			"foreign_link":            "187",
			"instantiate_cpu":         "0",
			"instantiate_mem":         "185", // SiNotInst
			"unknown_stat":            "188",
			"cx_as_stat":              "187",
			"added_twice":             "0/same/2", // counted: the guide's ref_count
			"before_read":             "189/neg",  // SiNoValue, and a negative value
			"add_bad_stat_handle":     "187",
			"del":                     "0/1/kept", // one reference left
			"del_last":                "0",
			"del_twice":               "188",
			"read_empty":              "187",
			"free":                    "0",
			"free_twice":              "180",
			"read_freed":              "180",
			"hot_unknown_stat":        "188", // the daemon's, naming Disk/*/busy
			"hot_bad_feed":            "187",
			"hot_added_twice":         "0/same/2/another", // other settings: another peer set
			"hot_del":                 "0/1/kept",
			"hot_del_last":            "0/gone",
			"hot_foreign_vals":        "187",
			"hot_free":                "0",
			"hot_free_twice":          "180",
			"init_bad_timeout":        "187",
			"after_exit":              "186", // SiNotInit
			"init_again":              "0",
			"handle_from_before_exit": "180",
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: SpmiErrno %q, want %s", k, got[k], v)
			}
		}
		if len(got) != len(want) {
			t.Errorf("driver reported %d checks, want %d: %v", len(got), len(want), got)
		}
	})
	// No daemon: SpmiInit fails with SiInitFailed naming the socket.
	dir := controlRunDir(t)
	d := startDriver(t, false, dir)
	if l := d.do("init"); !strings.HasPrefix(l, "err 190 ") || !strings.Contains(l, dir+"/subagent.sock") {
		t.Errorf("no daemon: %q, want SiInitFailed (190) naming the socket", l)
	}
}

// A hotset over CPU/*/idle made at run time returns the peers the Go
// consumer's does, and the hotset sample prints them.
func TestCRuntimeHotset(t *testing.T) {
	dir := controlRunDir(t)
	serveControl(t, dir)
	c, err := consumer.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	hs, err := c.NewHotSet(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hs.Add(t.Context(), spmiwire.HotDef{Stat: "CPU/*/idle", Feed: "always", MaxResp: 100}); err != nil {
		t.Fatal(err)
	}
	hs.Read(t.Context())
	r, err := hs.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, it := range r.PeerSets[0].Groups[0].Items {
		want = append(want, "CPU/"+it.Name+"="+strconv.FormatFloat(it.Value, 'g', -1, 64))
	}
	slices.Sort(want)
	if len(want) != 4 {
		t.Fatalf("Go hotset: %v", want)
	}
	bothLibs(t, func(t *testing.T, static bool) {
		d := startDriver(t, static, dir)
		d.ok("init")
		d.ok("hot CPU idle")
		// SiHotAlways: every peer from the first read, the counter in val
		// (the fixture's idle times), no change yet.
		if got := d.ok("hotread"); len(got) != 4 {
			t.Errorf("first reading of a counter hotset: %v, want the four processors", got)
		}
		items := d.ok("hotitems")
		slices.Sort(items)
		if want := []string{"cpu0:8765432:0", "cpu1:8770011:0", "cpu2:8759876:0", "cpu3:8771234:0"}; !slices.Equal(items, want) {
			t.Errorf("items of the first read (name:val:val_change): %v, want %v", items, want)
		}
		got := d.ok("hotread")
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("peers: %v, want %v", got, want)
		}
		if l := d.do("hot CPU idel"); !strings.HasPrefix(l, "err 188 ") || !strings.Contains(l, "CPU/*/idle") {
			t.Errorf("misspelled peer statistic: %q, want SiNotFound suggesting CPU/*/idle", l)
		}

		out := runConsumer(t, consumerSample(t, "SpmiHotPeers", static), dir, "CPU", "idle", "2")
		var peers []string
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) == 4 && f[0] == "2" && f[1] != "reading" {
				peers = append(peers, f[1]+"/"+f[2])
			}
		}
		if !slices.Equal(peers, []string{"CPU/cpu0", "CPU/cpu1", "CPU/cpu2", "CPU/cpu3"}) {
			t.Errorf("SpmiHotPeers: %q", out)
		}
	})
}

// The daemon restarting between two reads costs one failed call at most;
// then the statset reads again (its counter's rate restarting with the
// new daemon's values) and the hotset, made again with its peer set on
// the new connection, returns its peers.
func TestCDaemonRestart(t *testing.T) {
	bothLibs(t, func(t *testing.T, static bool) {
		dir := controlRunDir(t)
		srv := serveControl(t, dir)
		d := startDriver(t, static, dir)
		d.ok("init")
		d.ok("add Moving/level")
		d.ok("add CPU/cpu0/idle")
		d.ok("hot CPU idle")
		d.ok("read")
		d.ok("hotread")

		srv.stop()
		if l := d.do("read"); !strings.HasPrefix(l, "err 190 ") {
			t.Errorf("read with no daemon: %q, want SiInitFailed", l)
		}
		serveControl(t, dir)
		failed := 0
		for range 2 {
			if l := d.do("read"); !strings.HasPrefix(l, "ok ") {
				failed++
				t.Logf("read after the restart: %s", l)
			}
		}
		if failed > 1 {
			t.Errorf("%d reads failed after the daemon came back, want at most 1", failed)
		}
		r := parseReading(t, d.ok("read"))
		if r.vals["Moving/level"][2] != 42 || r.vals["CPU/cpu0/idle"][0] != 8765432 {
			t.Errorf("values after the restart: %+v", r)
		}
		failed = 0
		var got []string
		for range 3 {
			l := d.do("hotread")
			if !strings.HasPrefix(l, "ok") {
				failed++
				continue
			}
			got = strings.Fields(l)[1:]
		}
		if failed > 1 || len(got) != 4 {
			t.Errorf("hotset after the restart: %d failed reads, last peers %v", failed, got)
		}
	})
}

// A hotset created while the daemon is down (as after a restart) is made
// in the daemon by its first add once the daemon is back.
func TestCHotSetCreatedWhileTheDaemonIsDown(t *testing.T) {
	bothLibs(t, func(t *testing.T, static bool) {
		dir := controlRunDir(t)
		srv := serveControl(t, dir)
		d := startDriver(t, static, dir)
		d.ok("init")
		srv.stop()
		d.ok("newhot")
		serveControl(t, dir)
		for tries := 0; ; tries++ {
			l := d.do("hot CPU idle")
			if strings.HasPrefix(l, "ok") {
				break
			}
			if tries == 1 { // the first call may find the old connection closed
				t.Fatalf("SpmiAddSetHot with the daemon back: %q", l)
			}
		}
		if got := d.ok("hotread"); len(got) != 4 {
			t.Errorf("read of the hotset: %v, want the four processors", got)
		}
	})
}

// openPTY opens a pseudo-terminal: its master, closed with the test, and
// its slave, for a child's output.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}
