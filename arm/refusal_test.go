package arm

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/perfagent/subagent/armring"
	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/internal/testutil"
	"github.com/perfagent/subagent/rtimearm"
	"github.com/perfagent/subagent/spmi"
)

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

// A refused agent measures into nothing like one without a daemon, and
// asks again more and more rarely (10, 20, 40 retries) instead of every
// retry; once there is room it registers by itself.
func TestRefusedAgentIsASilentNoOpAndBacksOff(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "arm.sock")
	reg := rtimearm.NewRegistry(rtimearm.Limits{MaxApps: 4, MaxTrans: 4, MaxProcs: 1}, 75, time.Minute, nil, nil)
	srv, err := rtimearm.NewServer(rtimearm.ServerConfig{Socket: sock, Geometry: armring.Geometry{Slots: 64, Apps: 4, Trans: 4}}, reg)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer srv.Close()
	occupant := Open(&Options{Socket: sock, Retry: time.Hour})
	if !occupant.Connected() {
		t.Fatal("the first agent did not register")
	}

	waits := make(chan time.Duration, 1)
	fire := make(chan time.Time)
	a := Open(&Options{Socket: sock, Retry: time.Second, after: func(d time.Duration) <-chan time.Time {
		waits <- d
		return fire
	}})
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
	h.Stop(Good)

	for i, want := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second} {
		select {
		case got := <-waits:
			if got != want {
				t.Fatalf("wait %d after a refusal: %v, want %v", i, got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("the agent did not schedule retry %d", i)
		}
		if got := armStat(t, reg, "RTime/ARM/refused"); got != uint64(i+1) {
			t.Fatalf("the daemon saw %d refusals before retry %d, want %d", got, i, i+1)
		}
		if i < 2 {
			fire <- time.Time{}
		}
	}
	// Room again: the next retry registers, and measurement starts.
	occupant.Close()
	testutil.Eventually(t, "the first agent to leave", 5*time.Second, func() bool { return armStat(t, reg, "RTime/ARM/procs") == 0 })
	fire <- time.Time{}
	testutil.Eventually(t, "the refused agent to register", 5*time.Second, a.Connected)
	h = tr.Start()
	h.Stop(Good)
	if got := armStat(t, reg, "RTime/ARM/RefusedApp/t/count"); got != 1 {
		t.Fatalf("count %d after registering, want 1", got)
	}
	if got := armStat(t, reg, "RTime/ARM/RefusedApp/t/lost"); got != 1 {
		t.Errorf("lost %d, want 1: the instance measured while refused", got)
	}
}
