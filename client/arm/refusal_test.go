package arm

import (
	"net"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/armring"
)

// refuser is a daemon that refuses every Hello, as one at
// arm.max_processes does, and counts the refusals.
type refuser struct {
	sock    string
	refused atomic.Int64
}

func newRefuser(t *testing.T) *refuser {
	return newRefuserAt(t, filepath.Join(t.TempDir(), "arm.sock"))
}

func newRefuserAt(t *testing.T, sock string) *refuser {
	t.Helper()
	r := &refuser{sock: sock}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: r.sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.AcceptUnix()
			if err != nil {
				return
			}
			if typ, _, err := armring.ReadFrame(c); err == nil && typ == armring.MsgHello {
				r.refused.Add(1)
				c.Write((&armring.Welcome{Status: -1, Msg: "too many processes"}).Marshal())
			}
			c.Close()
		}
	}()
	return r
}

// A refused agent measures into nothing like one without a daemon, and
// asks again more and more rarely (10, 20, 40 retries) instead of every
// retry. (rtimearm's tests run it against the real server, until there
// is room and it registers.)
func TestRefusedAgentIsASilentNoOpAndBacksOff(t *testing.T) {
	r := newRefuser(t)
	waits := make(chan time.Duration, 1)
	fire := make(chan time.Time)
	a := Open(&Options{Socket: r.sock, Retry: time.Second, after: func(d time.Duration) <-chan time.Time {
		waits <- d
		return fire
	}})
	defer a.Close()
	if a.Connected() {
		t.Fatal("registered with a daemon that refuses")
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
		case <-time.After(time.Minute):
			t.Fatalf("the agent did not schedule retry %d", i)
		}
		if got := r.refused.Load(); got != int64(i+1) {
			t.Fatalf("the daemon refused %d times before retry %d, want %d", got, i, i+1)
		}
		if i < 2 {
			fire <- time.Time{}
		}
	}
	if a.Connected() {
		t.Fatal("connected after refusals")
	}
}
