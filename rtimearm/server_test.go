package rtimearm

import (
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/arm"
	"github.com/perfagent/subagent/client/armring"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/spmi"
)

// openWait bounds how long a test's agent waits to register (Options.Wait):
// a loaded machine may take longer than one attempt's 2 s.
const openWait = 2 * time.Minute

type fixture struct {
	srv    *Server
	reg    *Registry
	socket string
}

func startServer(t *testing.T, g armring.Geometry) *fixture {
	t.Helper()
	return startServerWith(t, g, Limits{MaxApps: 8, MaxTrans: 16}, nil)
}

func startServerWith(t *testing.T, g armring.Geometry, lim Limits, lg *slog.Logger) *fixture {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "arm.sock")
	reg := NewRegistry(lim, 75, time.Minute, nil, lg)
	srv, err := NewServer(ServerConfig{Socket: sock, Geometry: g, Logger: lg}, reg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve() }()
	t.Cleanup(func() {
		srv.Close()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Error("Serve did not return after Close")
		}
	})
	return &fixture{srv: srv, reg: reg, socket: sock}
}

func collect(t *testing.T, reg *Registry) *spmi.Snapshot {
	t.Helper()
	b := spmi.NewBuilder(asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1}, nil, time.Now())
	if err := reg.Provider().Collect(b); err != nil {
		t.Fatal(err)
	}
	return b.Finish()
}

func stat(t *testing.T, s *spmi.Snapshot, path string) spmiwire.Value {
	t.Helper()
	n, err := s.Lookup(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return n.Value
}

func TestGoProcessTransactionsBecomeStatistics(t *testing.T) {
	fx := startServer(t, armring.Geometry{Slots: 4096, Apps: 4, Trans: 8})
	ag := arm.Open(&arm.Options{Socket: fx.socket, Wait: openWait})
	defer ag.Close()
	if !ag.Connected() {
		t.Fatal("agent did not connect")
	}
	app := ag.App("Checking Account Query", "*")
	q := app.Transaction("Last Check Query", "first detail", arm.Metric{Field: 1, Type: arm.Counter32, Name: "records"},
		arm.Metric{Field: 2, Type: arm.Gauge32, Name: "queue"})
	app.Transaction("Last Check Query", "second detail")
	const threads, each = 4, 500
	var wg sync.WaitGroup
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				h := q.Start()
				h.Set(1, 100)
				h.Set(2, uint64(i%10))
				h.Set(1, 103)
				h.Stop(arm.Good)
			}
		}()
	}
	wg.Wait()
	for _, s := range []arm.Status{arm.Abort, arm.Failed, arm.Failed} {
		h := q.Start()
		h.Stop(s)
	}
	open := q.Start()
	snap := collect(t, fx.reg)
	p := "RTime/ARM/CheckingAccountQuery/LastCheckQuery/"
	for name, want := range map[string]uint64{"count": threads * each, "aborted": 1, "failed": 2, "inflight": 1, "lost": 0, "metric1": 3 * threads * each} {
		if got := stat(t, snap, p+name).Uint64(); got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}
	if got := stat(t, snap, p+"metric2max").Float64(); got != 9 {
		t.Errorf("metric2max = %v, want 9", got)
	}
	if got := stat(t, snap, p+"detail").TextValue(); got != "first detail" {
		t.Errorf("detail %q, want the first registration's", got)
	}
	mn, avg, mx := stat(t, snap, p+"respmin").Float64(), stat(t, snap, p+"respavg").Float64(), stat(t, snap, p+"respmax").Float64()
	if !(mn <= avg && avg <= mx+1) {
		t.Errorf("respmin %v respavg %v respmax %v out of order", mn, avg, mx)
	}
	if r := stat(t, snap, p+"rate").Float64(); r <= 0 {
		t.Errorf("rate %v", r)
	}
	if n, _ := snap.Lookup("RTime/ARM/CheckingAccountQuery"); n == nil || n.Descr != "Checking Account Query" {
		t.Errorf("application context %+v", n)
	}
	// The process goes away with one instance open: it is lost.
	ag.Close()
	_ = open
	testutil.Eventually(t, "lost 1 and inflight 0 after the process left", time.Minute, func() bool {
		snap = collect(t, fx.reg)
		return stat(t, snap, p+"lost").Uint64() == 1 && stat(t, snap, p+"inflight").Uint64() == 0
	})
}

// A full ring drops the details of instances (metric values here) and
// counts them as lost; the instances themselves are all counted.
func TestFullRingDropsAndCounts(t *testing.T) {
	fx := startServer(t, armring.Geometry{Slots: 16, Apps: 1, Trans: 1})
	ag := arm.Open(&arm.Options{Socket: fx.socket, Wait: openWait})
	defer ag.Close()
	q := ag.App("a", "").Transaction("t", "", arm.Metric{Field: 1, Type: arm.Counter64, Name: "n"})
	for range 40 {
		h := q.Start()
		h.Set(1, 0)
		h.Set(1, 1)
		h.Stop(arm.Good)
	}
	for range 1000 {
		h := q.Start()
		h.Stop(arm.Good)
	}
	snap := collect(t, fx.reg)
	p := "RTime/ARM/a/t/"
	c, l, m := stat(t, snap, p+"count").Uint64(), stat(t, snap, p+"lost").Uint64(), stat(t, snap, p+"metric1").Uint64()
	if c != 1040 || l != 24 || m != 16 {
		t.Fatalf("count %d lost %d metric1 %d, want 1040, 24 and 16", c, l, m)
	}
}

func TestGoAgentReconnectsAndCountsTheGap(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "arm.sock")
	g := armring.Geometry{Slots: 64, Apps: 2, Trans: 2}
	newSrv := func() (*Server, *Registry) {
		reg := NewRegistry(Limits{MaxApps: 2, MaxTrans: 2}, 75, time.Minute, nil, nil)
		srv, err := NewServer(ServerConfig{Socket: sock, Geometry: g}, reg)
		if err != nil {
			t.Fatal(err)
		}
		go srv.Serve()
		return srv, reg
	}
	srv, reg := newSrv()
	ag := arm.Open(&arm.Options{Socket: sock, Retry: 20 * time.Millisecond, Wait: openWait})
	defer ag.Close()
	tr := ag.App("app", "").Transaction("t", "")
	h := tr.Start()
	h.Stop(arm.Good)
	if got := stat(t, collect(t, reg), "RTime/ARM/app/t/count").Uint64(); got != 1 {
		t.Fatalf("count %d", got)
	}
	srv.Close()
	testutil.Eventually(t, "the agent to notice the daemon going away", time.Minute, func() bool { return !ag.Connected() })
	for range 3 { // measured while no daemon runs: lost, and counted
		h := tr.Start()
		h.Stop(arm.Good)
	}
	srv2, reg2 := newSrv()
	defer srv2.Close()
	testutil.Eventually(t, "the agent to register with the new daemon", time.Minute, ag.Connected)
	h = tr.Start()
	h.Stop(arm.Failed)
	s := collect(t, reg2)
	if c, f, l := stat(t, s, "RTime/ARM/app/t/count").Uint64(), stat(t, s, "RTime/ARM/app/t/failed").Uint64(), stat(t, s, "RTime/ARM/app/t/lost").Uint64(); c != 0 || f != 1 || l != 3 {
		t.Fatalf("after the restart: count %d failed %d lost %d, want 0, 1, 3", c, f, l)
	}
	// The first daemon's ring was let go (it was kept for the process's
	// life, one more per restart): only the new daemon's is mapped.
	testutil.Eventually(t, "one ring mapped here, the new daemon's", time.Minute, func() bool { return ringsMappedHere(t) == 1 })
}

func TestHelloRefusals(t *testing.T) {
	fx := startServer(t, armring.Geometry{Slots: 16, Apps: 1, Trans: 1})
	for _, tc := range []struct {
		name  string
		frame []byte
		want  string
	}{
		{"wrong pid", (&armring.Hello{Version: armring.Version, PID: 1}).Marshal(), "pid is not the connecting process's"},
		{"version 9", (&armring.Hello{Version: 9, PID: int32(os.Getpid())}).Marshal(), "version is not 2"},
		{"not a Hello", (&armring.Welcome{}).Marshal(), "not a Hello"},
	} {
		c, err := net.Dial("unix", fx.socket)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		c.Write(tc.frame)
		typ, body, err := armring.ReadFrame(c)
		c.Close()
		if err != nil || typ != armring.MsgWelcome {
			t.Fatalf("%s: %v", tc.name, err)
		}
		w, err := armring.DecodeWelcome(body)
		if err != nil || w.Status >= 0 || !strings.Contains(w.Msg, tc.want) {
			t.Errorf("%s: %+v %v, want a refusal naming %q", tc.name, w, err, tc.want)
		}
	}
	if got := stat(t, collect(t, fx.reg), "RTime/ARM/refused").Uint64(); got != 3 {
		t.Errorf("refused %d, want 3", got)
	}
}
