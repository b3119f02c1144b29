package rtimearm_test

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/arm"
	"github.com/perfagent/subagent/client/armring"
	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/rtimearm"
	"github.com/perfagent/subagent/rtimearm/armtest"
	"github.com/perfagent/subagent/spmi"
)

// clientEnv selects the client mode of the test binary: run as another
// user, it registers applications and holds its registration.
const clientEnv = "RTIMEARM_TEST_CLIENT"

func TestMain(m *testing.M) {
	if spec := os.Getenv(clientEnv); spec != "" {
		os.Exit(runClient(spec))
	}
	os.Exit(m.Run())
}

// runClient is "<socket> <prefix> <apps> <trans per app>": it registers,
// posts one instance of each transaction, prints "connected <bool>" and
// holds its registration until its stdin closes.
func runClient(spec string) int {
	var sock, prefix string
	var napps, ntrans int
	if _, err := fmt.Sscan(spec, &sock, &prefix, &napps, &ntrans); err != nil {
		fmt.Println("bad spec:", err)
		return 2
	}
	ag := arm.Open(&arm.Options{Socket: sock, Retry: time.Hour, Wait: armtest.OpenWait})
	defer ag.Close()
	for i := range napps {
		app := ag.App(fmt.Sprintf("%s%da%d", prefix, os.Getpid(), i), "")
		for j := range ntrans {
			h := app.Transaction(fmt.Sprintf("t%d", j), "").Start()
			h.Stop(arm.Good)
		}
	}
	fmt.Println("connected", ag.Connected())
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// serverWith starts a server with these limits, logging into log (nil: nowhere).
func serverWith(t *testing.T, lim rtimearm.Limits, log io.Writer) *armtest.Daemon {
	t.Helper()
	var lg *slog.Logger
	if log != nil {
		lg = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return armtest.Start(t, armtest.Options{Geometry: armring.Geometry{Slots: 64, Apps: 8, Trans: 16}, Limits: lim, Logger: lg})
}

// hello sends a Hello on a new connection and returns the Welcome's status
// (-100: none); the connection stays open (a registration lasts as long as
// it). Tests may call it from any goroutine.
func hello(t *testing.T, sock string, h armring.Hello) (net.Conn, int32) {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Error(err)
		return nil, -100
	}
	c.SetDeadline(time.Now().Add(armtest.OpenWait))
	if _, err := c.Write(h.Marshal()); err != nil {
		c.Close()
		return nil, -100
	}
	typ, body, err := armring.ReadFrame(c)
	if err != nil || typ != armring.MsgWelcome {
		c.Close()
		return nil, -100
	}
	w, err := armring.DecodeWelcome(body)
	if err != nil {
		t.Errorf("Welcome: %v", err)
		c.Close()
		return nil, -100
	}
	return c, w.Status
}

// One process opening many connections with Hellos in its own pid gets
// DefaultPerPID rings, not one per connection (it got 1,024, 2 GB).
func TestOneProcessGetsAtMostTwoRings(t *testing.T) {
	fx := serverWith(t, rtimearm.Limits{MaxApps: 8, MaxTrans: 16}, nil)
	var open []net.Conn
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	ok := 0
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 40 { // at once: each refusal is answered after a pause
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, st := hello(t, fx.Socket, armring.Hello{Version: armring.Version, PID: int32(os.Getpid()), Prog: "greedy"})
			mu.Lock()
			defer mu.Unlock()
			if st == 0 {
				ok++
			}
			if c != nil {
				open = append(open, c)
			}
		}()
	}
	wg.Wait()
	if ok != rtimearm.DefaultPerPID {
		t.Fatalf("one process got %d registrations, want %d", ok, rtimearm.DefaultPerPID)
	}
	snap := fx.Snapshot()
	if p, r := armtest.Stat(t, snap, "RTime/ARM/procs").Uint64(), armtest.Stat(t, snap, "RTime/ARM/refused").Uint64(); p != rtimearm.DefaultPerPID || r != 40-rtimearm.DefaultPerPID {
		t.Fatalf("procs %d refused %d, want %d and %d", p, r, rtimearm.DefaultPerPID, 40-rtimearm.DefaultPerPID)
	}
	// Its rings are given back when it lets go.
	for _, c := range open {
		c.Close()
	}
	open = nil
	testutil.Eventually(t, "the registrations to end", 5*time.Second, func() bool {
		return fx.Stat("RTime/ARM/procs").Uint64() == 0
	})
	c, st := hello(t, fx.Socket, armring.Hello{Version: armring.Version, PID: int32(os.Getpid())})
	if st != 0 {
		t.Fatalf("after letting go the process is refused: %d", st)
	}
	open = append(open, c)
}

// Thousands of bad Hellos (20,000 gave 20,007 WARN lines) are each
// answered and counted, and logged once per reason.
func TestBadHellosDoNotFloodTheLog(t *testing.T) {
	var log testutil.Buffer
	fx := serverWith(t, rtimearm.Limits{MaxApps: 8, MaxTrans: 16}, &log)
	frames := [][]byte{
		(&armring.Hello{Version: armring.Version, PID: 1}).Marshal(),
		(&armring.Hello{Version: 9, PID: int32(os.Getpid())}).Marshal(),
		(&armring.Welcome{}).Marshal(),
	}
	const n = 3000
	var wg sync.WaitGroup
	var answered atomic.Int64
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 4 {
				f := frames[i%len(frames)]
				if i%3 == 0 { // a different pid each time: still one reason
					f = (&armring.Hello{Version: armring.Version, PID: int32(100000 + i)}).Marshal()
				}
				c, err := net.Dial("unix", fx.Socket)
				if err != nil {
					t.Error(err)
					return
				}
				c.SetDeadline(time.Now().Add(5 * time.Second))
				c.Write(f)
				if typ, body, err := armring.ReadFrame(c); err == nil && typ == armring.MsgWelcome {
					if w, err := armring.DecodeWelcome(body); err == nil && w.Status < 0 {
						answered.Add(1)
					}
				}
				c.Close()
			}
		}()
	}
	wg.Wait()
	if answered.Load() != n {
		t.Errorf("%d of %d bad Hellos answered with a refusal", answered.Load(), n)
	}
	if got := fx.Stat("RTime/ARM/refused").Uint64(); got != n {
		t.Errorf("refused %d, want %d", got, n)
	}
	lines := strings.Count(log.String(), "\n")
	if lines > 5 || lines < 3 {
		t.Errorf("%d log lines for %d bad Hellos of 3 kinds, want 3 to 5:\n%s", lines, n, log.String())
	}
}

// A user (uid 65534) running more programs than its share gets its share
// of processes, applications and transactions and no more; root then
// still registers and is counted. Today one user could take every place.
func TestOneUserCannotTakeEveryPlace(t *testing.T) {
	testutil.RequireRoot(t)
	lim := rtimearm.Limits{MaxApps: 6, MaxTrans: 12, MaxProcs: 4, MaxAppsPerUID: 3, MaxTransPerUID: 4, MaxProcsPerUID: 2}
	fx := serverWith(t, lim, nil)
	const helpers = 4 // enough to fill every total
	var results []string
	for i := range helpers {
		line, _ := asNobody(t, fx, fmt.Sprintf("N%d 3 2", i))
		results = append(results, line)
	}
	connected := strings.Count(strings.Join(results, "\n"), "connected true")
	if connected != lim.MaxProcsPerUID {
		t.Errorf("uid 65534 registered %d processes (%q), want %d", connected, results, lim.MaxProcsPerUID)
	}
	snap := fx.Snapshot()
	apps, trans := 0, 0
	root, err := snap.Lookup("RTime/ARM")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range root.Children {
		if a.IsStat() || !strings.HasPrefix(a.Name, "N") {
			continue
		}
		apps++
		for _, tn := range a.Children {
			if !tn.IsStat() {
				trans++
			}
		}
	}
	if apps != lim.MaxAppsPerUID {
		t.Errorf("uid 65534 has %d applications, want its limit %d", apps, lim.MaxAppsPerUID)
	}
	if trans != lim.MaxTransPerUID {
		t.Errorf("uid 65534 has %d transactions, want its limit %d", trans, lim.MaxTransPerUID)
	}
	// Another user is not locked out.
	ag := arm.Open(&arm.Options{Socket: fx.Socket, Retry: time.Hour, Wait: armtest.OpenWait})
	defer ag.Close()
	if !ag.Connected() {
		t.Fatal("root was refused after uid 65534 took its share")
	}
	tr := ag.App("Root App", "").Transaction("t", "")
	for range 5 {
		h := tr.Start()
		h.Stop(arm.Good)
	}
	if got := fx.Stat("RTime/ARM/RootApp/t/count").Uint64(); got != 5 {
		t.Fatalf("root's count %d, want 5", got)
	}
}

// asNobody runs the test binary as uid 65534 registering with fx as spec
// says ("<prefix> <apps> <trans per app>", runClient); it returns the
// line the client printed and a stop that ends its registration.
func asNobody(t *testing.T, fx *armtest.Daemon, spec string) (line string, stop func()) {
	t.Helper()
	os.Chmod(filepath.Dir(fx.Socket), 0o755)
	testutil.Traversable(t, filepath.Dir(fx.Socket))
	testutil.Traversable(t, filepath.Dir(os.Args[0]))
	c := testutil.AsNobody(t, os.Args[0])
	c.Env = append(os.Environ(), fmt.Sprintf("%s=%s %s", clientEnv, fx.Socket, spec))
	stdin, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.Stderr = os.Stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	stop = func() { stdin.Close(); c.Wait() }
	t.Cleanup(stop)
	line, err = bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("client %s: %v", spec, err)
	}
	return strings.TrimSpace(line), stop
}

func oidOf(t *testing.T, s *spmi.Snapshot, path string) string {
	t.Helper()
	n, err := s.Lookup(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return n.FullOID(nil).String()
}

// An application whose processes are gone is dropped after AppIdle,
// freeing its place, and comes back at the same OID.
func TestIdleApplicationIsDroppedAndKeepsItsNumber(t *testing.T) {
	fx := serverWith(t, rtimearm.Limits{MaxApps: 1, MaxTrans: 4, AppIdle: time.Hour}, nil)
	var clk rtimearm.Clock
	clk.Set(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rtimearm.SetNow(fx.Reg, clk.Now)
	num := spmi.NewNumbering("")
	run := func(appName string) *arm.Agent {
		ag := arm.Open(&arm.Options{Socket: fx.Socket, Retry: time.Hour, Wait: armtest.OpenWait})
		h := ag.App(appName, "").Transaction("t", "").Start()
		h.Stop(arm.Good)
		return ag
	}
	gone := func(ag *arm.Agent) {
		ag.Close()
		testutil.Eventually(t, "the process to leave", 5*time.Second, func() bool {
			return armtest.Stat(t, armtest.CollectNum(t, fx.Reg, num, clk.Now()), "RTime/ARM/procs").Uint64() == 0
		})
	}
	ag := run("Idle")
	idleOID := oidOf(t, armtest.CollectNum(t, fx.Reg, num, clk.Now()), "RTime/ARM/Idle/t/count")
	gone(ag)

	clk.Advance(time.Hour - time.Second)
	if _, err := armtest.CollectNum(t, fx.Reg, num, clk.Now()).Lookup("RTime/ARM/Idle/t/count"); err != nil {
		t.Fatalf("dropped before arm.app_idle: %v", err)
	}
	clk.Advance(time.Second)
	if _, err := armtest.CollectNum(t, fx.Reg, num, clk.Now()).Lookup("RTime/ARM/Idle"); err == nil {
		t.Fatal("still served after being idle for arm.app_idle")
	}
	// Its place (max_applications is 1) is free for another...
	ag = run("Other")
	otherOID := oidOf(t, armtest.CollectNum(t, fx.Reg, num, clk.Now()), "RTime/ARM/Other/t/count")
	if otherOID == idleOID {
		t.Fatalf("Other took Idle's number %s", idleOID)
	}
	gone(ag)
	clk.Advance(time.Hour)
	armtest.CollectNum(t, fx.Reg, num, clk.Now())
	// ...and the first comes back where it was.
	ag = run("Idle")
	defer ag.Close()
	s := armtest.CollectNum(t, fx.Reg, num, clk.Now())
	if got := oidOf(t, s, "RTime/ARM/Idle/t/count"); got != idleOID {
		t.Errorf("Idle came back at %s, was %s", got, idleOID)
	}
	if c := armtest.Stat(t, s, "RTime/ARM/Idle/t/count").Uint64(); c != 1 {
		t.Errorf("count %d after coming back, want 1 (a new start)", c)
	}
}

// A live application is never dropped, however long it posts nothing.
func TestLiveApplicationIsNotDropped(t *testing.T) {
	fx := serverWith(t, rtimearm.Limits{MaxApps: 2, MaxTrans: 4, AppIdle: time.Minute}, nil)
	var clk rtimearm.Clock
	rtimearm.SetNow(fx.Reg, clk.Now)
	ag := arm.Open(&arm.Options{Socket: fx.Socket, Retry: time.Hour, Wait: armtest.OpenWait})
	defer ag.Close()
	ag.App("Live", "").Transaction("t", "")
	fx.Snapshot()
	clk.Advance(24 * time.Hour)
	if _, err := fx.Snapshot().Lookup("RTime/ARM/Live/t"); err != nil {
		t.Fatalf("a live application was dropped: %v", err)
	}
}

// subagent delete RTime/ARM/<app>: gone from the tree and the limits; a
// live process posting again re-creates it at the same OIDs.
func TestDeleteApplication(t *testing.T) {
	fx := serverWith(t, rtimearm.Limits{MaxApps: 1, MaxTrans: 4}, nil)
	num := spmi.NewNumbering("")
	ag := arm.Open(&arm.Options{Socket: fx.Socket, Retry: time.Hour, Wait: armtest.OpenWait})
	defer ag.Close()
	tr := ag.App("Del", "").Transaction("t", "")
	for range 3 {
		h := tr.Start()
		h.Stop(arm.Good)
	}
	s := armtest.CollectNum(t, fx.Reg, num, time.Now())
	oid := oidOf(t, s, "RTime/ARM/Del/t/count")
	if c := armtest.Stat(t, s, "RTime/ARM/Del/t/count").Uint64(); c != 3 {
		t.Fatalf("count %d", c)
	}
	pr := fx.Reg.Provider()
	if ok, err := pr.Delete("RTime/ARM/Del"); !ok || err != nil {
		t.Fatalf("delete: %v %v", ok, err)
	}
	if _, err := armtest.CollectNum(t, fx.Reg, num, time.Now()).Lookup("RTime/ARM/Del"); err == nil {
		t.Fatal("still served after delete")
	}
	for path, want := range map[string]string{"RTime/ARM/Del": "no ARM application", "RTime/ARM/Del/t": "whole application"} {
		if ok, err := pr.Delete(path); ok || err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("delete %s: %v %v, want an error saying %q", path, ok, err, want)
		}
	}
	if ok, err := pr.Delete("CPU/cpu0"); ok || err != nil {
		t.Errorf("delete of another provider's path: %v %v", ok, err)
	}
	// Its place is free (max_applications is 1) until the live process posts again.
	if n := rtimearm.AppsOfUID(fx.Reg, uint32(os.Geteuid())); n != 0 {
		t.Errorf("the user still holds %d applications after delete", n)
	}
	h := tr.Start()
	h.Stop(arm.Failed)
	s = armtest.CollectNum(t, fx.Reg, num, time.Now())
	if got := oidOf(t, s, "RTime/ARM/Del/t/count"); got != oid {
		t.Errorf("re-created at %s, was %s", got, oid)
	}
	if c, f := armtest.Stat(t, s, "RTime/ARM/Del/t/count").Uint64(), armtest.Stat(t, s, "RTime/ARM/Del/t/failed").Uint64(); c != 0 || f != 1 {
		t.Errorf("after re-creation count %d failed %d, want 0 and 1", c, f)
	}
}

// Applications numbered by an earlier release took the numbers after
// RTime/ARM's five statistics; after an upgrade they are served there, so
// RTime/ARM cannot have gained a statistic.
func TestApplicationsNumberedBeforeAnUpgradeKeepTheirNumbers(t *testing.T) {
	fx := serverWith(t, rtimearm.Limits{MaxApps: 8, MaxTrans: 4, AppIdle: time.Hour}, nil)
	num := spmi.NewNumbering("")
	apps := []string{"Six", "Seven", "Eight", "Nine"}
	for i, a := range apps {
		if err := num.Put(rtimearm.Root, a, uint32(6+i)); err != nil {
			t.Fatal(err)
		}
	}
	ag := arm.Open(&arm.Options{Socket: fx.Socket, Retry: time.Hour, Wait: armtest.OpenWait})
	defer ag.Close()
	for _, a := range apps {
		h := ag.App(a, "").Transaction("t", "").Start()
		h.Stop(arm.Good)
	}
	var s *spmi.Snapshot
	testutil.Eventually(t, "the four applications", 5*time.Second, func() bool {
		s = armtest.CollectNum(t, fx.Reg, num, time.Now())
		_, err := s.Lookup("RTime/ARM/Nine/t/count")
		return err == nil
	})
	base := oidOf(t, s, "RTime/ARM")
	for i, a := range apps {
		if got, want := oidOf(t, s, "RTime/ARM/"+a), fmt.Sprintf("%s.%d", base, 6+i); got != want {
			t.Errorf("RTime/ARM/%s at %s, numbered %s before the upgrade", a, got, want)
		}
	}
}

// At a numbering cap of 50 names, uid 65534 making up application names
// (eight a process, four processes one after the other, each application
// dropped once idle) gets its share of the names, 12, and its other
// applications are refused and counted; root's application is then
// numbered and served. After the grace period the names are released.
func TestApplicationNamesPerUser(t *testing.T) {
	testutil.RequireRoot(t)
	num := spmi.NewNumbering("")
	num.SetMaxNames(50)
	lim := rtimearm.Limits{MaxApps: 100, MaxTrans: 400, MaxAppsPerUID: 25, MaxTransPerUID: 100, AppIdle: time.Minute, MaxAppNamesPerUID: 12}
	reg := rtimearm.NewRegistry(lim, 75, time.Minute, num, nil)
	var clk rtimearm.Clock
	clk.Set(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rtimearm.SetNow(reg, clk.Now)
	fx := armtest.Start(t, armtest.Options{Geometry: armring.Geometry{Slots: 64, Apps: 8, Trans: 16}, Registry: reg})
	for i := range 4 {
		line, stop := asNobody(t, fx, fmt.Sprintf("X%d 8 1", i))
		if line != "connected true" {
			t.Fatalf("round %d: %s", i, line)
		}
		stop()
		testutil.Eventually(t, "the process to leave", 5*time.Second, func() bool {
			return armtest.Stat(t, armtest.CollectNum(t, reg, num, clk.Now()), "RTime/ARM/procs").Uint64() == 0
		})
		clk.Advance(time.Minute) // idle: dropped, the names stay in their grace period
		armtest.CollectNum(t, reg, num, clk.Now())
	}
	if got := len(num.Share(rtimearm.Root, "uid 65534")); got != 12 {
		t.Errorf("uid 65534 holds %d names, want its share of 12", got)
	}
	s := armtest.CollectNum(t, reg, num, clk.Now())
	if errs := armtest.Stat(t, s, "RTime/ARM/errors").Uint64(); errs < 32-12 {
		t.Errorf("RTime/ARM/errors %d, want at least the %d applications refused", errs, 32-12)
	}
	ag := arm.Open(&arm.Options{Socket: fx.Socket, Retry: time.Hour, Wait: armtest.OpenWait})
	defer ag.Close()
	h := ag.App("Root App", "").Transaction("t", "").Start()
	h.Stop(arm.Good)
	if got := fx.Stat("RTime/ARM/RootApp/t/count").Uint64(); got != 1 {
		t.Fatalf("root's count %d, want 1", got)
	}
	if _, ok := num.Lookup(rtimearm.Root, "RootApp"); !ok {
		t.Error("root's application has no number")
	}
	// After the grace period the names of the applications gone are
	// released, and uid 65534 has its whole share again.
	num.SetGrace(10 * time.Minute)
	live := map[string]map[string]bool{rtimearm.Root: {"RootApp": true}, rtimearm.Root + "/RootApp": {"t": true}}
	t0 := clk.Now()
	num.Sweep(live, t0)
	num.Sweep(live, t0.Add(10*time.Minute))
	if got := num.Share(rtimearm.Root, "uid 65534"); len(got) != 0 {
		t.Errorf("after the grace period uid 65534 holds %v", got)
	}
	if names := num.Names(rtimearm.Root); len(names) != 1 {
		t.Errorf("RTime/ARM numbers %v after the grace period, want RootApp only", names)
	}
}
