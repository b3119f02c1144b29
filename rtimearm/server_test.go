package rtimearm_test

import (
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/client/arm"
	"github.com/perfagent/subagent/client/armring"
	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/rtimearm"
	"github.com/perfagent/subagent/rtimearm/armtest"
)

// The daemon's server with the Go ARM package (client/arm) and raw
// connections; external tests, as they use armtest.

// startServer is a daemon with room for 8 applications of 16 transactions.
func startServer(t *testing.T, g armring.Geometry) *armtest.Daemon {
	t.Helper()
	return armtest.Start(t, armtest.Options{Geometry: g, Limits: rtimearm.Limits{MaxApps: 8, MaxTrans: 16}})
}

func TestGoProcessTransactionsBecomeStatistics(t *testing.T) {
	fx := startServer(t, armring.Geometry{Slots: 4096, Apps: 4, Trans: 8})
	ag := arm.Open(&arm.Options{Socket: fx.Socket, Wait: armtest.OpenWait})
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
	snap := fx.Snapshot()
	p := "RTime/ARM/CheckingAccountQuery/LastCheckQuery/"
	for name, want := range map[string]uint64{"count": threads * each, "aborted": 1, "failed": 2, "inflight": 1, "lost": 0, "metric1": 3 * threads * each} {
		if got := armtest.Stat(t, snap, p+name).Uint64(); got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}
	if got := armtest.Stat(t, snap, p+"metric2max").Float64(); got != 9 {
		t.Errorf("metric2max = %v, want 9", got)
	}
	if got := armtest.Stat(t, snap, p+"detail").TextValue(); got != "first detail" {
		t.Errorf("detail %q, want the first registration's", got)
	}
	mn, avg, mx := armtest.Stat(t, snap, p+"respmin").Float64(), armtest.Stat(t, snap, p+"respavg").Float64(), armtest.Stat(t, snap, p+"respmax").Float64()
	if !(mn <= avg && avg <= mx+1) {
		t.Errorf("respmin %v respavg %v respmax %v out of order", mn, avg, mx)
	}
	if r := armtest.Stat(t, snap, p+"rate").Float64(); r <= 0 {
		t.Errorf("rate %v", r)
	}
	if n, _ := snap.Lookup("RTime/ARM/CheckingAccountQuery"); n == nil || n.Descr != "Checking Account Query" {
		t.Errorf("application context %+v", n)
	}
	// The process goes away with one instance open: it is lost.
	ag.Close()
	_ = open
	testutil.Eventually(t, "lost 1 and inflight 0 after the process left", time.Minute, func() bool {
		snap = fx.Snapshot()
		return armtest.Stat(t, snap, p+"lost").Uint64() == 1 && armtest.Stat(t, snap, p+"inflight").Uint64() == 0
	})
}

// A full ring drops the details of instances (metric values here) and
// counts them as lost; the instances themselves are all counted.
func TestFullRingDropsAndCounts(t *testing.T) {
	fx := startServer(t, armring.Geometry{Slots: 16, Apps: 1, Trans: 1})
	ag := arm.Open(&arm.Options{Socket: fx.Socket, Wait: armtest.OpenWait})
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
	snap := fx.Snapshot()
	p := "RTime/ARM/a/t/"
	c, l, m := armtest.Stat(t, snap, p+"count").Uint64(), armtest.Stat(t, snap, p+"lost").Uint64(), armtest.Stat(t, snap, p+"metric1").Uint64()
	if c != 1040 || l != 24 || m != 16 {
		t.Fatalf("count %d lost %d metric1 %d, want 1040, 24 and 16", c, l, m)
	}
}

func TestGoAgentReconnectsAndCountsTheGap(t *testing.T) {
	// The second daemon serves where the first did.
	o := armtest.Options{Geometry: armring.Geometry{Slots: 64, Apps: 2, Trans: 2}, Limits: rtimearm.Limits{MaxApps: 2, MaxTrans: 2}, Dir: t.TempDir()}
	d := armtest.Start(t, o)
	ag := arm.Open(&arm.Options{Socket: d.Socket, Retry: 20 * time.Millisecond, Wait: armtest.OpenWait})
	defer ag.Close()
	tr := ag.App("app", "").Transaction("t", "")
	h := tr.Start()
	h.Stop(arm.Good)
	if got := d.Stat("RTime/ARM/app/t/count").Uint64(); got != 1 {
		t.Fatalf("count %d", got)
	}
	d.Srv.Close()
	testutil.Eventually(t, "the agent to notice the daemon going away", time.Minute, func() bool { return !ag.Connected() })
	for range 3 { // measured while no daemon runs: lost, and counted
		h := tr.Start()
		h.Stop(arm.Good)
	}
	d2 := armtest.Start(t, o)
	testutil.Eventually(t, "the agent to register with the new daemon", time.Minute, ag.Connected)
	h = tr.Start()
	h.Stop(arm.Failed)
	s := d2.Snapshot()
	if c, f, l := armtest.Stat(t, s, "RTime/ARM/app/t/count").Uint64(), armtest.Stat(t, s, "RTime/ARM/app/t/failed").Uint64(), armtest.Stat(t, s, "RTime/ARM/app/t/lost").Uint64(); c != 0 || f != 1 || l != 3 {
		t.Fatalf("after the restart: count %d failed %d lost %d, want 0, 1, 3", c, f, l)
	}
	// The first daemon's ring was let go (it was kept for the process's
	// life, one more per restart): only the new daemon's is mapped.
	testutil.Eventually(t, "one ring mapped here, the new daemon's", time.Minute, func() bool { return armtest.RingsMapped(t, os.Getpid()) == 1 })
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
		c, err := net.Dial("unix", fx.Socket)
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
	if got := fx.Stat("RTime/ARM/refused").Uint64(); got != 3 {
		t.Errorf("refused %d, want 3", got)
	}
}

// When a process's registration ends, the daemon punches its file's
// pages out (the process may map it on: it then holds only what it writes
// itself); when the daemon stops, it does not (the libraries count what
// it did not take).
func TestDepartedRingsPagesAreFreed(t *testing.T) {
	for _, stop := range []bool{false, true} {
		fx := startServer(t, armring.Geometry{Slots: 64, Apps: 2, Trans: 2})
		c, err := net.Dial("unix", fx.Socket)
		if err != nil {
			t.Fatal(err)
		}
		uc := c.(*net.UnixConn)
		uc.SetDeadline(time.Now().Add(armtest.OpenWait))
		uc.Write((&armring.Hello{Version: armring.Version, PID: int32(os.Getpid())}).Marshal())
		buf, oob := make([]byte, 8+armring.MaxFrame), make([]byte, unix.CmsgSpace(4))
		_, oobn, _, _, err := uc.ReadMsgUnix(buf, oob)
		if err != nil {
			t.Fatal(err)
		}
		msgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
		fds, err := unix.ParseUnixRights(&msgs[0])
		if err != nil || len(fds) != 1 {
			t.Fatalf("descriptors %v %v", fds, err)
		}
		var st unix.Stat_t
		unix.Fstat(fds[0], &st)
		mem, err := unix.Mmap(fds[0], 0, int(st.Size), unix.PROT_READ, unix.MAP_SHARED)
		unix.Close(fds[0])
		if err != nil {
			t.Fatal(err)
		}
		if string(mem[:7]) != "ARMRING" {
			t.Fatalf("header %q", mem[:8])
		}
		if stop {
			fx.Srv.Close()
		} else {
			c.Close()
		}
		testutil.Eventually(t, "the registration to end", time.Minute, func() bool {
			return fx.Stat("RTime/ARM/procs").Uint64() == 0
		})
		if freed := string(mem[:7]) != "ARMRING"; freed == stop {
			t.Errorf("daemon stopping %v: pages freed %v (header %q)", stop, freed, mem[:8])
		}
		unix.Munmap(mem)
		c.Close()
	}
}

// package arm lets a daemon's ring go when its registration ends: a
// program that closes and opens agents in a loop registers every time
// (the daemon releases its rings it no longer maps) and maps none of the
// earlier rings.
func TestGoAgentReopenedRegistersEveryTime(t *testing.T) {
	fx := startServer(t, armring.Geometry{Slots: 64, Apps: 2, Trans: 2})
	for i := range 6 {
		ag := arm.Open(&arm.Options{Socket: fx.Socket, Retry: time.Hour, Wait: armtest.OpenWait})
		if !ag.Connected() {
			t.Fatalf("open %d: not registered", i)
		}
		ag.Close()
		testutil.Eventually(t, "the registration to end", time.Minute, func() bool {
			return fx.Stat("RTime/ARM/procs").Uint64() == 0
		})
		if n := armtest.RingsMapped(t, os.Getpid()); n != 0 {
			t.Fatalf("after close %d this process maps %d rings", i, n)
		}
	}
}

// unixsock's connection limits are answered naming the arm settings they
// come from.
func TestConnectionLimitRefusalNamesTheSetting(t *testing.T) {
	fx := armtest.Start(t, armtest.Options{Geometry: armring.Geometry{Slots: 16, Apps: 1, Trans: 1},
		Limits: rtimearm.Limits{MaxApps: 1, MaxTrans: 1, MaxProcs: 1}, IOTimeout: time.Hour})
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range 1 + rtimearm.HelloSlack { // silent: each holds a place until IOTimeout
		c, err := net.Dial("unix", fx.Socket)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	testutil.Eventually(t, "the connections to be accepted", time.Minute, func() bool {
		return rtimearm.OpenConns(fx.Srv) == 1+rtimearm.HelloSlack
	})
	c, err := net.Dial("unix", fx.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(armtest.OpenWait))
	typ, body, err := armring.ReadFrame(c)
	if err != nil || typ != armring.MsgWelcome {
		t.Fatalf("%v %v", typ, err)
	}
	w, _ := armring.DecodeWelcome(body)
	if w.Status >= 0 || !strings.Contains(w.Msg, "(arm.max_processes, plus 32 Hellos in progress)") {
		t.Errorf("refusal %d %q names no setting", w.Status, w.Msg)
	}
}
