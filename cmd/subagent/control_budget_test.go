package main

import (
	"bufio"
	"context"
	"fmt"
	"github.com/perfagent/subagent/client/consumer"
	"github.com/perfagent/subagent/client/spmiwire"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
)

// A reader of the control socket (uid 65534 on control.allow_uids) gets a
// bounded share of the daemon: the runtime hotsets of all its connections
// together stay within its budget and are given back, memory included,
// when they close; its refused changes take a line of log a minute; and
// SNMP keeps being answered meanwhile (docs/SECURITY.md, "Each user's
// share"). Issue 26.

// attackProcs is the size of the attack's /proc: enough that a peer set
// feeding every process holds about 200 KB.
const attackProcs = 500

// procRootOf makes a /proc of the fixture's files plus n processes (the
// fixture's java process renumbered).
func procRootOf(t *testing.T, n int) string {
	t.Helper()
	fix, _ := filepath.Abs("../../hoststats/testdata/proc")
	root := filepath.Join(t.TempDir(), "proc")
	testutil.CopyTree(t, fix, root)
	stat, err := os.ReadFile(filepath.Join(fix, "1187", "stat"))
	if err != nil {
		t.Fatal(err)
	}
	rest := strings.TrimPrefix(string(stat), "1187 ")
	for pid := 10000; pid < 10000+n; pid++ {
		dir := filepath.Join(root, strconv.Itoa(pid))
		os.Mkdir(dir, 0o755)
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(fmt.Sprintf("%d %s", pid, rest)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// budgetEnv starts a daemon on a /proc of attackProcs processes whose
// control socket uid 65534 may read, with the standalone responder on
// 127.0.0.1, and returns an SNMP client of it once it serves.
func budgetEnv(t *testing.T) (*env, *managers) {
	t.Helper()
	testutil.RequireRoot(t)
	e := newEnv(t)
	e.proc = procRootOf(t, attackProcs)
	if err := os.MkdirAll(e.runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	testutil.Traversable(t, e.runDir)
	testutil.Traversable(t, filepath.Dir(os.Args[0]))
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(cfg, []byte("control:\n  mode: \"0666\"\n  allow_uids: [65534]\n"), 0o644)
	m, args := startManagers(t)
	e.start(append([]string{"--config", cfg}, args...)...)
	m.attach(t, idleOID)
	return e, m
}

// readRSS is a process's resident set in KiB.
func readRSS(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			return strconv.Atoi(strings.Fields(v)[0])
		}
	}
	return 0, fmt.Errorf("no VmRSS for %d", pid)
}

// rssWatch samples the daemon's resident set every 10 ms until stopped;
// above kill it stops the attacker at once, so that a daemon without
// bounds fails the test without taking the machine's memory.
type rssWatch struct {
	peak atomic.Int64
	stop chan struct{}
	done chan struct{}
}

func watchRSS(pid int, kill int, attacker *exec.Cmd) *rssWatch {
	w := &rssWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			if kb, err := readRSS(pid); err == nil && int64(kb) > w.peak.Load() {
				w.peak.Store(int64(kb))
				if kb > kill {
					attacker.Process.Kill()
				}
			}
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

func (w *rssWatch) end() int {
	close(w.stop)
	<-w.done
	return int(w.peak.Load())
}

// readerAttack is a test mode run as uid 65534.
type readerAttack struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
}

func startReaderAttack(t *testing.T, mode string) *readerAttack {
	t.Helper()
	cmd := testutil.AsNobody(t, os.Args[0])
	cmd.Env = append(os.Environ(), testModeEnv+"="+mode, "SUBAGENT_CONFIG=")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a := &readerAttack{cmd: cmd, stdin: stdin, lines: make(chan string, 1000)}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			a.lines <- sc.Text()
		}
		close(a.lines)
	}()
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	return a
}

// ready tells whether the attacker made its hotsets (and was not
// stopped for the daemon's size).
func (a *readerAttack) ready(made string) bool { return strings.HasPrefix(made, "hotsets ") }

// waitFor waits for the attacker's line that starts with prefix.
func (a *readerAttack) waitFor(t *testing.T, prefix string) string {
	t.Helper()
	for {
		l := a.line(t, 2*time.Minute)
		if l == "" {
			t.Fatalf("the attacker ended before saying %q", prefix)
		}
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
}

// line waits for the attacker's next line; "" when it ended.
func (a *readerAttack) line(t *testing.T, within time.Duration) string {
	t.Helper()
	select {
	case l := <-a.lines:
		return l
	case <-time.After(within):
		t.Fatalf("the attacker said nothing for %v", within)
		return ""
	}
}

// 16 connections of one reader, each making as many hotsets of peer sets
// feeding every process as it may and reading them over and over: the
// daemon stays small, says which setting refused, gives the memory back
// when they close, keeps serving root and SNMP.
func TestReaderHotsetsAreBoundedPerUser(t *testing.T) {
	e, m := budgetEnv(t)
	pid := e.daemon.Process.Pid
	e.getOK(t, "Proc/pid/10000/rss")
	idle, err := readRSS(pid)
	if err != nil {
		t.Fatal(err)
	}
	q50, q99 := quietGets(t, m.standalone, idleOID, 1000)
	t.Logf("SNMP GET before the attack: p50 %v, p99 %v (1000 GETs)", q50, q99)
	a := startReaderAttack(t, "hotsets "+e.runDir+" 16 64 256 Proc/pid/*/rss")
	watch := watchRSS(pid, 1<<20, a.cmd) // stop at 1 GiB
	gets := m.sample(t, idleOID)

	var made, reads string
	var refusals []string
	for l := a.line(t, 3*time.Minute); l != "ready"; l = a.line(t, 3*time.Minute) {
		if l == "" {
			made = "ended before it was ready (stopped at 1 GiB)"
			break
		}
		if r, ok := strings.CutPrefix(l, "refusal: "); ok {
			refusals = append(refusals, r)
		} else {
			made = l
		}
	}
	if a.ready(made) {
		from := gets.count()
		a.waitFor(t, "read 100")
		testutil.Eventually(t, "300 SNMP GETs while the attacker reads its hotsets", time.Minute, func() bool {
			return gets.count() >= from+300
		})
		// Root is not held back: it makes a hotset and reads it.
		rootHotset(t, e.runDir)
		e.getOK(t, "CPU/cpu0/idle")
		a.stdin.Close()
		reads = a.waitFor(t, "reads ")
	}
	figures := gets.end(t, "the hotset attack")
	peak := watch.end()
	a.stdin.Close()
	a.cmd.Wait()

	t.Logf("attacker: %s; %s; %d refusals: %q", made, reads, len(refusals), refusals)
	t.Logf("daemon RSS: idle %d KiB, peak %d KiB; SNMP GETs during the attack: %s", idle, peak, figures)
	if len(refusals) == 0 {
		t.Error("the attacker was never refused")
	}
	for _, r := range refusals {
		if !strings.HasPrefix(r, "SiCallocFailed") || !strings.Contains(r, "(control.max_hotset") {
			t.Errorf("refusal %q does not name the setting (control.max_hotset...) with SiCallocFailed", r)
		}
	}
	if !strings.HasPrefix(reads, "reads ") || !strings.HasSuffix(reads, " errors 0") {
		t.Errorf("the attacker's reads of what it was allowed: %q", reads)
	}
	if peak > 200<<10 {
		t.Errorf("daemon RSS peaked at %d KiB, over 200 MiB", peak)
	}
	// Back to within 1.5 times idle within seconds: the daemon gives the
	// memory back when the connections close (at once and 2 s later), not
	// when its collector happens to run (after 1.4 to 13 s in three runs
	// without it, up to minutes on an idle daemon).
	var now int
	left := time.Now()
	testutil.Eventually(t, "the daemon's memory to return after the attacker left", 5*time.Second, func() bool {
		now, _ = readRSS(pid)
		return now <= idle*3/2
	})
	t.Logf("daemon RSS after the attacker left: %d KiB, %v after", now, time.Since(left).Round(time.Millisecond))
}

// rootHotset makes a hotset as root over every process and reads it.
func rootHotset(t *testing.T, runDir string) {
	t.Helper()
	c, err := consumer.Dial(runDir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := t.Context()
	id, err := c.HotsetCreate(ctx)
	if err != nil {
		t.Fatalf("root's hotset during the attack: %v", err)
	}
	if _, err := c.HotsetAdd(ctx, id, spmiwire.HotDef{Stat: "Proc/pid/*/rss", Feed: "always"}); err != nil {
		t.Fatalf("root's peer set during the attack: %v", err)
	}
	r, err := c.HotsetGet(ctx, id, time.Time{})
	if err != nil || len(r.PeerSets) != 1 || len(r.PeerSets[0].Groups) != 1 || len(r.PeerSets[0].Groups[0].Items) < attackProcs {
		t.Fatalf("root's read during the attack: %v", err)
	}
}

// A reader repeating a refused create with a 60 KB path: a line of log
// at most a few seconds, the log growing by less than 1 MB a minute,
// SNMP answered meanwhile.
func TestRefusedChangesCannotFloodTheLog(t *testing.T) {
	e, m := budgetEnv(t)
	before := len(e.daemonLog.String())
	a := startReaderAttack(t, "refusedcreates "+e.runDir+" 3 61440")
	gets := m.sample(t, idleOID)
	t0 := time.Now()
	res := a.line(t, time.Minute)
	took := time.Since(t0)
	figures := gets.end(t, "the refused creates")
	a.stdin.Close()
	a.cmd.Wait()

	var creates, refused int
	fmt.Sscanf(res, "creates %d refused %d", &creates, &refused)
	log := e.daemonLog.String()[before:]
	lines := strings.Count(log, "control: change refused")
	t.Logf("%d refused creates in %v: %d log lines, %d bytes of log; SNMP GETs meanwhile: %s",
		creates, took.Round(time.Millisecond), lines, len(log), figures)
	if creates < 100 || refused != creates {
		t.Fatalf("attacker: %q; want at least 100 creates, each refused", res)
	}
	if lines < 1 || lines > 3 {
		t.Errorf("%d refusals logged in %d lines; want one, a few at most; the first:\n%.400s", creates, lines, log)
	}
	if limit := int(took.Minutes() * (1 << 20)); len(log) > limit {
		t.Errorf("the log grew by %d bytes in %v, over 1 MB a minute (%d)", len(log), took, limit)
	}
}

// hotsetAttack <run dir> <connections> <hotsets> <peer sets> <stat>: each
// connection makes hotsets, fills each with peer sets feeding every peer
// of stat and reads it, until refused or at the counts; it prints what it
// made and each distinct refusal, then "ready", reads every hotset over
// and over until stdin closes ("read <n>" after every 100), and prints
// the reads.
func hotsetAttack(args []string) int {
	runDir, stat := args[0], args[4]
	conns, _ := strconv.Atoi(args[1])
	hotsets, _ := strconv.Atoi(args[2])
	peerSets, _ := strconv.Atoi(args[3])
	ctx := context.Background()
	var mu sync.Mutex
	var made, sets int
	refusals := map[string]bool{}
	refused := func(err error) {
		mu.Lock()
		refusals[err.Error()] = true
		mu.Unlock()
	}
	clients := make([]*consumer.Client, conns)
	ids := make([][]int, conns)
	for i := range clients {
		c, err := consumer.Dial(runDir)
		if err != nil {
			fmt.Println("dial:", err)
			return 1
		}
		clients[i] = c
	}
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			for range hotsets {
				id, err := c.HotsetCreate(ctx)
				if err != nil {
					refused(err)
					return
				}
				ids[i] = append(ids[i], id)
				n := 0
				for range peerSets {
					if _, err := c.HotsetAdd(ctx, id, spmiwire.HotDef{Stat: stat, Feed: "always"}); err != nil {
						refused(err)
						break
					}
					n++
				}
				if _, err := c.HotsetGet(ctx, id, time.Time{}); err != nil {
					refused(err)
				}
				mu.Lock()
				made, sets = made+1, sets+n
				mu.Unlock()
				if n == 0 {
					return
				}
			}
		})
	}
	wg.Wait()
	fmt.Printf("hotsets %d peersets %d\n", made, sets)
	for r := range refusals {
		fmt.Println("refusal:", r)
	}
	fmt.Println("ready")
	os.Stdout.Sync()

	stop := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(stop)
	}()
	var reads, errs atomic.Int64
	for i, c := range clients {
		wg.Go(func() {
			for {
				for _, id := range ids[i] {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := c.HotsetGet(ctx, id, time.Time{}); err != nil {
						errs.Add(1)
					}
					if n := reads.Add(1); n%100 == 0 {
						fmt.Println("read", n)
					}
				}
				if len(ids[i]) == 0 {
					<-stop
					return
				}
			}
		})
	}
	wg.Wait()
	fmt.Printf("reads %d errors %d\n", reads.Load(), errs.Load())
	return 0
}

// refusedCreates <run dir> <seconds> <path bytes>: asks to create a
// context of a path that long, over and over for that long, and prints
// how many it asked and how many were refused.
func refusedCreates(args []string) int {
	secs, _ := strconv.Atoi(args[1])
	size, _ := strconv.Atoi(args[2])
	c, err := consumer.Dial(args[0])
	if err != nil {
		fmt.Println("dial:", err)
		return 1
	}
	defer c.Close()
	path := "RTime/LAN/" + strings.Repeat("x", size)
	creates, refused := 0, 0
	for end := time.Now().Add(time.Duration(secs) * time.Second); time.Now().Before(end); creates++ {
		if err := c.Create(context.Background(), path); err != nil && strings.Contains(err.Error(), "may not create") {
			refused++
		}
	}
	fmt.Printf("creates %d refused %d\n", creates, refused)
	return 0
}
