package control_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/consumer"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/control/controltest"
)

// daemon serves the fixture host on a control socket in dir until stop.
type daemon struct {
	stop func()
}

func serve(t *testing.T, dir string) *daemon {
	t.Helper()
	return &daemon{stop: controltest.ServeFixture(t, dir, "../hoststats")}
}

func TestTraversal(t *testing.T) {
	dir := runDir(t)
	serve(t, dir)
	c := connect(t, consumer.Open, dir)
	ctx := t.Context()
	top, err := c.Children(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, cx := range top {
		names = append(names, cx.Name)
	}
	if got := strings.Join(names, " "); got != "CPU Mem PagSp Disk LAN IP TCP UDP ICMP Proc FS" {
		t.Errorf("top-level contexts: %s", got)
	}
	cpus, err := c.Children(ctx, "CPU")
	if err != nil {
		t.Fatal(err)
	}
	if len(cpus) != 5 || cpus[0].Name != "total" || cpus[1].Name != "cpu0" || !cpus[1].Instance {
		t.Errorf("CPU instances: %+v", cpus)
	}
	cx, err := c.PathGetCx(ctx, "CPU")
	if err != nil || cx.Inst != ddswire.SiCfgInst {
		t.Errorf("PathGetCx CPU: %+v %v", cx, err)
	}
	stats, err := c.Stats(ctx, "Mem/Real")
	if err != nil || len(stats) < 3 || stats[0].Path != "Mem/Real/size" || stats[0].ASN != 1 {
		t.Errorf("Mem/Real statistics: %+v %v", stats, err)
	}
	if _, err := c.PathGetCx(ctx, "Nope"); spmierr.CodeOf(err) != spmierr.SiNotFound {
		t.Errorf("unknown context: %v, want SiNotFound", err)
	}
	if err := c.Instantiate(ctx, "Proc/pid"); err != nil {
		t.Errorf("Instantiate: %v", err)
	}
}

func TestStatSetRatesAndErrors(t *testing.T) {
	dir := runDir(t)
	serve(t, dir)
	c := connect(t, consumer.Open, dir)
	ctx := t.Context()
	if _, err := c.NewStatSet(ctx, "CPU/cpu0/nope"); spmierr.CodeOf(err) != spmierr.SiNotFound {
		t.Errorf("unknown statistic: %v, want SiNotFound", err)
	}
	ss, err := c.NewStatSet(ctx, "CPU/cpu0/idle", "Mem/Real/%free")
	if err != nil {
		t.Fatal(err)
	}
	if err := ss.Add(ctx, "CPU/cpu0/idle"); err != nil || ss.RefCount("CPU/cpu0/idle") != 2 {
		t.Errorf("added twice: %v, ref_count %d, want 2", err, ss.RefCount("CPU/cpu0/idle"))
	}
	r1, err := ss.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := ss.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !r2.Time.After(r1.Time) || r2.Elapsed <= 0 {
		t.Errorf("second read at %v after %v (elapsed %v): not a newer snapshot", r2.Time, r1.Time, r2.Elapsed)
	}
	// The fixture does not move: a counter's rate is 0, a level its value.
	if v := r2.Values[0]; !v.HasRate || v.Rate != 0 || v.Value.Uint64() != 8765432 {
		t.Errorf("counter: %+v", v)
	}
	if v := r2.Values[1]; v.HasRate || v.Value.Float64() < 10 {
		t.Errorf("level: %+v", v)
	}
}

func TestRuntimeHotsetAndRestart(t *testing.T) {
	dir := runDir(t)
	d := serve(t, dir)
	c := connect(t, consumer.Open, dir)
	ctx := t.Context()
	hs, err := c.NewHotSet(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hs.Add(ctx, spmiwire.HotDef{Stat: "Disk/*/bussy", Feed: "always"}); spmierr.CodeOf(err) != spmierr.SiNotFound || !strings.Contains(err.Error(), "Disk/*/busy") {
		t.Errorf("misspelled statistic: %v, want SiNotFound suggesting Disk/*/busy", err)
	}
	if _, err := hs.Add(ctx, spmiwire.HotDef{Stat: "Disk/*/busy", Feed: "sometimes"}); spmierr.CodeOf(err) != spmierr.SiBadArgument {
		t.Errorf("bad feed type: %v, want SiBadArgument", err)
	}
	i, err := hs.Add(ctx, spmiwire.HotDef{Stat: "Disk/*/qlen", Feed: "always", MaxResp: 1})
	if err != nil || i != 0 {
		t.Fatalf("Add: %d %v", i, err)
	}
	r, err := hs.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.PeerSets) != 1 || len(r.PeerSets[0].Groups) != 1 {
		t.Fatalf("reading: %+v", r)
	}
	g := r.PeerSets[0].Groups[0]
	if g.Avail != 2 || len(g.Items) != 1 || g.Items[0].Name != "sda" || g.Items[0].Value != 2 {
		t.Errorf("peers of Disk/*/qlen, the hottest (sda, 2) returned: %+v", g)
	}

	ss, err := c.NewStatSet(ctx, "Disk/sda/qlen", "CPU/cpu0/idle")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ss.Read(ctx); err != nil {
		t.Fatal(err)
	}

	// The daemon restarts: one read fails at most, then the hotset and
	// the statset are made again on the new connection and read.
	d.stop()
	serve(t, dir)
	failed := 0
	for range 2 {
		if _, err := hs.Read(ctx); err != nil {
			failed++
		}
	}
	if failed > 1 {
		t.Errorf("%d reads failed after the restart, want at most 1", failed)
	}
	sr, err := ss.Read(ctx)
	if err != nil || len(sr.Values) != 2 || sr.Values[0].Value.Uint64() != 2 || sr.Values[1].Path != "CPU/cpu0/idle" || !sr.Values[1].HasRate {
		t.Errorf("the statset after the restart: %+v %v", sr, err)
	}
	r, err = hs.Read(ctx)
	if err != nil || len(r.PeerSets) != 1 || len(r.PeerSets[0].Groups[0].Items) != 1 {
		t.Errorf("after the restart: %+v %v", r, err)
	}
	if err := hs.Free(ctx); err != nil {
		t.Fatal(err)
	}
	if err := hs.Free(ctx); spmierr.CodeOf(err) != spmierr.SiInvalidCx {
		t.Errorf("freed twice: %v, want SiInvalidCx", err)
	}
}

// consumer.Open("") finds the daemon as libSpmi does ($SUBAGENT_RUN_DIR first);
// no daemon, on Open or after it went away, is the guide's SiInitFailed,
// through which errors.Is still sees the cause.
func TestOpenFindsTheDaemonAndTypesItsAbsence(t *testing.T) {
	dir := runDir(t)
	t.Setenv("SUBAGENT_RUN_DIR", dir)
	if _, err := consumer.Open(""); spmierr.CodeOf(err) != spmierr.SiInitFailed || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Open with no daemon: %v, want SiInitFailed naming %s", err, dir)
	}
	d := serve(t, dir)
	c := connect(t, consumer.Open, "")
	if _, err := c.PathGetCx(t.Context(), "CPU"); err != nil {
		t.Fatal(err)
	}
	d.stop()
	_, err := c.PathGetCx(t.Context(), "CPU")
	if spmierr.CodeOf(err) != spmierr.SiInitFailed {
		t.Errorf("a call after the daemon stopped: %v, want SiInitFailed", err)
	}
}

// The outside program of docs/CONSUMERS.md (client/testdata/consumer, a
// module of its own that requires the client module alone) builds, finds
// the daemon through $SUBAGENT_RUN_DIR, and prints what it read: the
// CPUs, a statset read twice with the counter's rate the second time, and
// the hottest disks. With no daemon it exits with SiInitFailed's code.
func TestOutsideConsumerProgram(t *testing.T) {
	client, err := filepath.Abs("../client")
	if err != nil {
		t.Fatal(err)
	}
	src, mod := filepath.Join(client, "testdata", "consumer"), t.TempDir()
	for _, file := range []string{"go.mod", "go.sum", "main.go"} {
		b, err := os.ReadFile(filepath.Join(src, file))
		if err != nil {
			t.Fatal(err)
		}
		b = []byte(strings.Replace(string(b), "=> ../..", "=> "+client, 1))
		if err := os.WriteFile(filepath.Join(mod, file), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(mod, "consumer")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir, build.Env = mod, append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the outside consumer: %v\n%s", err, out)
	}

	dir := runDir(t)
	d := serve(t, dir)
	run := func() (string, int) {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin)
		cmd.Env = append(os.Environ(), "SUBAGENT_RUN_DIR="+dir)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return string(out), cmd.ProcessState.ExitCode()
	}
	out, code := run()
	if code != 0 {
		t.Fatalf("the consumer exited %d:\n%s", code, out)
	}
	for _, want := range []string{"context CPU/cpu0/: ", "stat CPU/cpu0/idle = ", "/s\n", "stat Mem/Real/%free = ", "hot Disk/sda/busy = "} {
		if !strings.Contains(out, want) {
			t.Errorf("the consumer's output lacks %q:\n%s", want, out)
		}
	}
	d.stop()
	out, code = run()
	if code != int(spmierr.SiInitFailed) || !strings.Contains(out, filepath.Join(dir, "subagent.sock")) {
		t.Errorf("with no daemon the consumer exited %d, want %d (SiInitFailed) naming the socket:\n%s", code, spmierr.SiInitFailed, out)
	}
}
