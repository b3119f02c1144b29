package rtimearm_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/arm"
	"github.com/perfagent/subagent/client/armring"
	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/rtimearm"
	"github.com/perfagent/subagent/spmi"
)

// The Go ARM package (client/arm) against the real server. Its own tests
// check the exact back-off after refusals against a stand-in daemon.

func armStat(t *testing.T, reg *rtimearm.Registry, path string) uint64 {
	t.Helper()
	b := spmi.NewBuilder(asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1}, nil, time.Now())
	if err := reg.Provider().Collect(b); err != nil {
		t.Fatal(err)
	}
	n, err := b.Finish().Lookup(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return n.Value.Uint64()
}

// An agent refused at arm.max_processes measures into nothing, asks again
// more and more rarely (after 10, then 20 retries, ...), and registers by
// itself once there is room: what it measured while refused is lost.
func TestRefusedAgentRegistersWhenThereIsRoom(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "arm.sock")
	reg := rtimearm.NewRegistry(rtimearm.Limits{MaxApps: 4, MaxTrans: 4, MaxProcs: 1}, 75, time.Minute, nil, nil)
	srv, err := rtimearm.NewServer(rtimearm.ServerConfig{Socket: sock, Geometry: armring.Geometry{Slots: 64, Apps: 4, Trans: 4}}, reg)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer srv.Close()
	occupant := arm.Open(&arm.Options{Socket: sock, Retry: time.Hour, Wait: 2 * time.Minute})
	if !occupant.Connected() {
		t.Fatal("the first agent did not register")
	}

	const retry = 10 * time.Millisecond
	opened := time.Now()
	a := arm.Open(&arm.Options{Socket: sock, Retry: retry, Wait: 2 * time.Minute})
	defer a.Close()
	if a.Connected() {
		t.Fatal("registered beyond arm.max_processes")
	}
	app := a.App("Refused App", "")
	tr := app.Transaction("t", "")
	if app.ID() <= 0 || tr.ID() <= 0 {
		t.Fatalf("ids %d %d, want the valid ids of a library without a daemon", app.ID(), tr.ID())
	}
	h := tr.Start()
	if !h.Valid() {
		t.Fatal("Start of a refused agent gave an invalid handle")
	}
	h.Stop(arm.Good)

	// The third refusal comes after waits of 10 and 20 retries at least,
	// not two retries after the first.
	testutil.Eventually(t, "three refusals", 10*time.Second, func() bool { return armStat(t, reg, "RTime/ARM/refused") >= 3 })
	if d := time.Since(opened); d < 30*retry {
		t.Fatalf("three refusals within %v: the agent did not back off", d)
	}

	// Room again: a later retry registers, and measurement starts.
	occupant.Close()
	testutil.Eventually(t, "the first agent to leave", 5*time.Second, func() bool { return armStat(t, reg, "RTime/ARM/procs") == 0 })
	testutil.Eventually(t, "the refused agent to register", 10*time.Second, a.Connected)
	h = tr.Start()
	h.Stop(arm.Good)
	if got := armStat(t, reg, "RTime/ARM/RefusedApp/t/count"); got != 1 {
		t.Fatalf("count %d after registering, want 1", got)
	}
	if got := armStat(t, reg, "RTime/ARM/RefusedApp/t/lost"); got != 1 {
		t.Errorf("lost %d, want 1: the instance measured while refused", got)
	}
}

// BenchmarkStartStop is one Start plus Stop against a real daemon's
// server draining in the background (go test -bench StartStop ./rtimearm/):
// with the shipped ring and drain interval, and tuned (64 Ki slots, 1 ms).
func BenchmarkStartStop(b *testing.B) {
	c, err := config.Load(nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, v := range []struct {
		name  string
		slots int
		every time.Duration
	}{{"shipped", c.ARM.RingSlots, c.ARM.DrainInterval}, {"tuned", 1 << 16, time.Millisecond}} {
		b.Run(v.name, func(b *testing.B) { benchStartStop(b, uint32(v.slots), v.every) })
	}
}

func benchStartStop(b *testing.B, slots uint32, every time.Duration) {
	sock := filepath.Join(b.TempDir(), "arm.sock")
	reg := rtimearm.NewRegistry(rtimearm.Limits{MaxApps: 4, MaxTrans: 4}, 75, time.Minute, nil, nil)
	srv, err := rtimearm.NewServer(rtimearm.ServerConfig{Socket: sock, Geometry: armring.Geometry{Slots: slots, Apps: 4, Trans: 4}}, reg)
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve()
	defer srv.Close()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go reg.DrainEvery(ctx, every)
	a := arm.Open(&arm.Options{Socket: sock, Wait: 2 * time.Minute})
	defer a.Close()
	if !a.Connected() {
		b.Fatal("not connected")
	}
	tr := a.App("bench", "").Transaction("pair", "")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		h := tr.Start()
		h.Stop(arm.Good)
	}
}
