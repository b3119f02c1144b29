package consumer

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/control"
	"github.com/perfagent/subagent/control/controltest"
	"github.com/perfagent/subagent/hoststats"
	"github.com/perfagent/subagent/spmi"
)

// daemon serves the fixture host on a control socket in dir until stop.
type daemon struct {
	stop func()
}

func serve(t *testing.T, dir string) *daemon {
	t.Helper()
	provs, err := hoststats.Providers(hoststats.FixtureConfig("../hoststats"))
	if err != nil {
		t.Fatal(err)
	}
	h := spmi.NewHierarchy(spmi.Config{Base: asn1tree.MustParse("1.3.6.1.4.1.32473.1"), MinAge: time.Millisecond})
	for _, p := range provs {
		h.Add(p)
	}
	return &daemon{stop: controltest.Serve(t, dir, h)}
}

func runDir(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestTraversal(t *testing.T) {
	dir := runDir(t)
	serve(t, dir)
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
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
	if err != nil || cx.Inst != spmi.SiCfgInst {
		t.Errorf("PathGetCx CPU: %+v %v", cx, err)
	}
	stats, err := c.Stats(ctx, "Mem/Real")
	if err != nil || len(stats) < 3 || stats[0].Path != "Mem/Real/size" || stats[0].ASN != 1 {
		t.Errorf("Mem/Real statistics: %+v %v", stats, err)
	}
	if _, err := c.PathGetCx(ctx, "Nope"); spmi.CodeOf(err) != spmi.SiNotFound {
		t.Errorf("unknown context: %v, want SiNotFound", err)
	}
	if err := c.Instantiate(ctx, "Proc/pid"); err != nil {
		t.Errorf("Instantiate: %v", err)
	}
}

func TestStatSetRatesAndErrors(t *testing.T) {
	dir := runDir(t)
	serve(t, dir)
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := t.Context()
	if _, err := c.NewStatSet(ctx, "CPU/cpu0/nope"); spmi.CodeOf(err) != spmi.SiNotFound {
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
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := t.Context()
	hs, err := c.NewHotSet(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hs.Add(ctx, control.HotDef{Stat: "Disk/*/bussy", Feed: "always"}); spmi.CodeOf(err) != spmi.SiNotFound || !strings.Contains(err.Error(), "Disk/*/busy") {
		t.Errorf("misspelled statistic: %v, want SiNotFound suggesting Disk/*/busy", err)
	}
	if _, err := hs.Add(ctx, control.HotDef{Stat: "Disk/*/busy", Feed: "sometimes"}); spmi.CodeOf(err) != spmi.SiBadArgument {
		t.Errorf("bad feed type: %v, want SiBadArgument", err)
	}
	i, err := hs.Add(ctx, control.HotDef{Stat: "Disk/*/qlen", Feed: "always", MaxResp: 1})
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

	// The daemon restarts: one read fails at most, then the hotset is
	// made again on the new connection and reads.
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
	r, err = hs.Read(ctx)
	if err != nil || len(r.PeerSets) != 1 || len(r.PeerSets[0].Groups[0].Items) != 1 {
		t.Errorf("after the restart: %+v %v", r, err)
	}
	if err := hs.Free(ctx); err != nil {
		t.Fatal(err)
	}
	if err := hs.Free(ctx); spmi.CodeOf(err) != spmi.SiInvalidCx {
		t.Errorf("freed twice: %v, want SiInvalidCx", err)
	}
}

// Open("") finds the daemon as libSpmi does ($SUBAGENT_RUN_DIR first);
// no daemon, on Open or after it went away, is the guide's SiInitFailed,
// through which errors.Is still sees the cause.
func TestOpenFindsTheDaemonAndTypesItsAbsence(t *testing.T) {
	dir := runDir(t)
	t.Setenv("SUBAGENT_RUN_DIR", dir)
	if _, err := Open(""); spmi.CodeOf(err) != spmi.SiInitFailed || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Open with no daemon: %v, want SiInitFailed naming %s", err, dir)
	}
	d := serve(t, dir)
	c, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.PathGetCx(t.Context(), "CPU"); err != nil {
		t.Fatal(err)
	}
	d.stop()
	_, err = c.PathGetCx(t.Context(), "CPU")
	if spmi.CodeOf(err) != spmi.SiInitFailed {
		t.Errorf("a call after the daemon stopped: %v, want SiInitFailed", err)
	}
}
