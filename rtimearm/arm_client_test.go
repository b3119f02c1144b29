package rtimearm_test

import (
	"errors"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/arm"
	"github.com/perfagent/subagent/client/armring"
	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/rtimearm"
	"github.com/perfagent/subagent/rtimearm/armtest"
	"github.com/perfagent/subagent/spmi"
)

// The Go ARM package (client/arm) against the real server. Its own tests
// check the exact back-off after refusals against a stand-in daemon.

// An agent refused at arm.max_processes measures into nothing, asks again
// more and more rarely (after 10, then 20 retries, ...), and registers by
// itself once there is room: what it measured while refused is lost.
func TestRefusedAgentRegistersWhenThereIsRoom(t *testing.T) {
	fx := armtest.Start(t, armtest.Options{Geometry: armring.Geometry{Slots: 64, Apps: 4, Trans: 4},
		Limits: rtimearm.Limits{MaxApps: 4, MaxTrans: 4, MaxProcs: 1}})
	occupant := arm.Open(&arm.Options{Socket: fx.Socket, Retry: time.Hour, Wait: armtest.OpenWait})
	if !occupant.Connected() {
		t.Fatal("the first agent did not register")
	}

	const retry = 10 * time.Millisecond
	opened := time.Now()
	a := arm.Open(&arm.Options{Socket: fx.Socket, Retry: retry, Wait: armtest.OpenWait})
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
	testutil.Eventually(t, "three refusals", 10*time.Second, func() bool { return fx.Stat("RTime/ARM/refused").Uint64() >= 3 })
	if d := time.Since(opened); d < 30*retry {
		t.Fatalf("three refusals within %v: the agent did not back off", d)
	}

	// Room again: a later retry registers, and measurement starts.
	occupant.Close()
	testutil.Eventually(t, "the first agent to leave", 5*time.Second, func() bool { return fx.Stat("RTime/ARM/procs").Uint64() == 0 })
	testutil.Eventually(t, "the refused agent to register", 10*time.Second, a.Connected)
	h = tr.Start()
	h.Stop(arm.Good)
	if got := fx.Stat("RTime/ARM/RefusedApp/t/count").Uint64(); got != 1 {
		t.Fatalf("count %d after registering, want 1", got)
	}
	if got := fx.Stat("RTime/ARM/RefusedApp/t/lost").Uint64(); got != 1 {
		t.Errorf("lost %d, want 1: the instance measured while refused", got)
	}
}

// BenchmarkStartStop is one Start plus Stop against a real daemon's
// server draining in the background (go test -bench StartStop ./rtimearm/):
// with the shipped ring and drain interval, and tuned (64 Ki slots, 1 ms).
func BenchmarkStartStop(b *testing.B) {
	o := armtest.Options{Geometry: armring.Geometry{Apps: 4, Trans: 4}, Limits: rtimearm.Limits{MaxApps: 4, MaxTrans: 4}}
	armtest.StartStop(b, o, func(b *testing.B, d *armtest.Daemon) {
		a := arm.Open(&arm.Options{Socket: d.Socket, Wait: armtest.OpenWait})
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
	})
}

// An application the daemon cannot number, at state.max_names_per_context
// here, is refused to the Go program itself: with Options.Wait, App waits
// for the daemon's answer, and the refused App's Err is arm.ErrRefused,
// its ID -5 (arm_init's refusal code) and its transactions nil; the
// applications numbered before it are served.
func TestNumberingRefusalReachesTheAgent(t *testing.T) {
	num := spmi.NewNumbering("")
	num.SetMaxNames(2)
	reg := rtimearm.NewRegistry(rtimearm.Limits{MaxApps: 16, MaxTrans: 16}, 75, time.Minute, num, nil)
	fx := armtest.Start(t, armtest.Options{Geometry: armring.Geometry{Slots: 64, Apps: 4, Trans: 4}, Registry: reg})
	a := arm.Open(&arm.Options{Socket: fx.Socket, Retry: time.Hour, Wait: armtest.OpenWait})
	defer a.Close()
	if !a.Connected() {
		t.Fatal("the agent did not register")
	}
	one, two := a.App("One", ""), a.App("Two", "")
	three := a.App("Three", "")
	if one.Err() != nil || two.Err() != nil || one.ID() <= 0 || two.ID() <= 0 {
		t.Fatalf("within the cap: errs %v %v, ids %d %d", one.Err(), two.Err(), one.ID(), two.ID())
	}
	if !errors.Is(three.Err(), arm.ErrRefused) || three.ID() != armring.VerdictRefused {
		t.Fatalf("beyond the cap: err %v id %d, want arm.ErrRefused and %d", three.Err(), three.ID(), armring.VerdictRefused)
	}
	if tr := three.Transaction("t", ""); tr != nil {
		t.Fatalf("a refused application gave a transaction (id %d)", tr.ID())
	}
	h := one.Transaction("t", "").Start()
	h.Stop(arm.Good)
	testutil.Eventually(t, "One/t counted", time.Minute, func() bool {
		return fx.Stat("RTime/ARM/One/t/count").Uint64() == 1
	})
	if _, err := fx.Snapshot().Lookup("RTime/ARM/Three"); err == nil {
		t.Error("the refused application is served")
	}
}
