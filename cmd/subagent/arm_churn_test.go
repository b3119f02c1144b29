package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/client/armring"
	"github.com/perfagent/subagent/client/testutil"
)

// armHello registers this process on the ARM socket at path, as a
// hostile program would: the Welcome's status and reason, and the ring
// mapped shared when one came and mapRing is set (then never unmapped).
func armHello(path string, mapRing bool) (ring []byte, status int32, reason string, err error) {
	c, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		return nil, 0, "", err
	}
	uc := c.(*net.UnixConn)
	defer uc.Close()
	uc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := uc.Write((&armring.Hello{Version: armring.Version, PID: int32(os.Getpid()), Prog: "churn"}).Marshal()); err != nil {
		return nil, 0, "", err
	}
	buf := make([]byte, 8+armring.MaxFrame)
	oob := make([]byte, unix.CmsgSpace(4*4))
	n, oobn, _, _, err := uc.ReadMsgUnix(buf, oob)
	var fds []int
	if msgs, perr := unix.ParseSocketControlMessage(oob[:oobn]); perr == nil {
		for _, m := range msgs {
			if got, perr := unix.ParseUnixRights(&m); perr == nil {
				fds = append(fds, got...)
			}
		}
	}
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	if err != nil {
		return nil, 0, "", err
	}
	typ, body, err := armring.ReadFrame(io.MultiReader(bytes.NewReader(buf[:n]), uc))
	if err != nil || typ != armring.MsgWelcome {
		return nil, 0, "", fmt.Errorf("no Welcome: type %d, %v", typ, err)
	}
	w, err := armring.DecodeWelcome(body)
	if err != nil {
		return nil, 0, "", err
	}
	if w.Status != 0 || len(fds) != 1 || !mapRing {
		return nil, w.Status, w.Msg, nil
	}
	ring, err = unix.Mmap(fds[0], 0, int(w.FileLen()), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	return ring, 0, "", err
}

// armAttack <socket> <churn|flood> <seconds> <rings> attacks arm.sock
// as uid 65534 did in issue 26. It prints "ready", waits for a line on
// stdin, then for <seconds> sends Hellos, one connection each: churn maps
// each ring it gets and keeps it (until it holds <rings>), flood closes at
// once. It then prints "hellos <n> held <rings> refused <n> errors <n>",
// the reasons of the refusals one a line, and an empty line, and keeps
// its mappings until stdin closes.
func armAttack(args []string) int {
	churn := args[1] == "churn"
	secs, _ := strconv.ParseFloat(args[2], 64)
	most, _ := strconv.Atoi(args[3])
	in := bufio.NewReader(os.Stdin)
	fmt.Println("ready")
	if _, err := in.ReadString('\n'); err != nil {
		return 1
	}
	var rings [][]byte
	hellos, refused, errs := 0, 0, 0
	reasons := map[string]bool{}
	for end := time.Now().Add(time.Duration(secs * float64(time.Second))); time.Now().Before(end) && len(rings) < most; {
		ring, st, reason, err := armHello(args[0], churn)
		hellos++
		switch {
		case err != nil:
			errs++
		case ring != nil:
			rings = append(rings, ring)
		case st != 0:
			refused++
			reasons[reason] = true
		}
	}
	fmt.Printf("hellos %d held %d refused %d errors %d\n", hellos, len(rings), refused, errs)
	for r := range reasons {
		fmt.Println(r)
	}
	fmt.Println()
	io.Copy(io.Discard, in)
	runtime.KeepAlive(rings)
	return 0
}

// armAttackers are copies of this test binary in mode armattack, run as
// uid 65534.
type armAttackers struct {
	cmds   []*exec.Cmd
	stdins []io.WriteCloser
	outs   []*bufio.Reader
}

// startARMAttackers starts n attackers and waits until each is ready.
func startARMAttackers(t *testing.T, n int, spec string) *armAttackers {
	t.Helper()
	a := &armAttackers{}
	t.Cleanup(a.stop)
	for range n {
		c := testutil.AsNobody(t, os.Args[0])
		c.Env = append(os.Environ(), testModeEnv+"=armattack "+spec)
		c.Stderr = os.Stderr
		in, err := c.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		a.cmds, a.stdins, a.outs = append(a.cmds, c), append(a.stdins, in), append(a.outs, bufio.NewReader(out))
	}
	for i, r := range a.outs {
		if l, err := r.ReadString('\n'); err != nil || l != "ready\n" {
			t.Fatalf("attacker %d: %q %v", i, l, err)
		}
	}
	return a
}

// attack starts every attacker at once and returns their result lines
// and the reasons of their refusals.
func (a *armAttackers) attack(t *testing.T) (results []string, reasons map[string]bool) {
	t.Helper()
	for _, in := range a.stdins {
		io.WriteString(in, "go\n")
	}
	reasons = map[string]bool{}
	for i, r := range a.outs {
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("attacker %d: %v", i, err)
		}
		results = append(results, strings.TrimSpace(l))
		for {
			l, err := r.ReadString('\n')
			if err != nil || strings.TrimSpace(l) == "" {
				break
			}
			reasons[strings.TrimSpace(l)] = true
		}
	}
	return results, reasons
}

func (a *armAttackers) pids() []int {
	var out []int
	for _, c := range a.cmds {
		out = append(out, c.Process.Pid)
	}
	return out
}

func (a *armAttackers) stop() {
	for _, in := range a.stdins {
		in.Close()
	}
	for _, c := range a.cmds {
		c.Wait()
	}
	a.stdins, a.cmds = nil, nil
}

// ringsMapped counts the daemon's ARM rings (memfds named subagent-arm)
// that the processes map, each file once, and sums their sizes (fstat,
// through /proc/<pid>/map_files).
func ringsMapped(t *testing.T, pids []int) (rings int, size int64) {
	t.Helper()
	seen := map[string]bool{}
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			f := strings.Fields(l)
			if len(f) < 6 || !strings.HasPrefix(f[5], "/memfd:subagent-arm") || seen[f[3]+" "+f[4]] {
				continue
			}
			seen[f[3]+" "+f[4]] = true
			fi, err := os.Stat(fmt.Sprintf("/proc/%d/map_files/%s", pid, f[0]))
			if err != nil {
				t.Fatal(err)
			}
			rings++
			size += fi.Size()
		}
	}
	return rings, size
}

// armAttackEnv is a daemon with the standalone responder whose arm.sock
// uid 65534 can reach, with a share of perUID rings a user.
type armAttackEnv struct {
	e     *env
	sock  string
	m     *managers
	bound int64 // ring_bytes_per_uid_max, as the daemon logged it
}

func startARMAttackEnv(t *testing.T, perUID int) *armAttackEnv {
	t.Helper()
	testutil.RequireRoot(t)
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "SUBAGENT_ARM_") {
			t.Fatalf("%s is set: this test sets the arm settings itself", kv)
		}
	}
	t.Setenv("SUBAGENT_ARM_MAX_PROCESSES_PER_UID", strconv.Itoa(perUID))
	testutil.Traversable(t, filepath.Dir(os.Args[0]))
	mg, args := startManagers(t)
	a := &armAttackEnv{e: newEnv(t), m: mg}
	a.e.start(args...)
	testutil.Traversable(t, a.e.runDir)
	a.sock = filepath.Join(a.e.runDir, "arm.sock")
	m := regexp.MustCompile(`ring_bytes_per_uid_max=(\d+)`).FindStringSubmatch(a.e.daemonLog.String())
	if m == nil {
		t.Fatalf("the daemon did not log ring_bytes_per_uid_max:\n%s", a.e.daemonLog)
	}
	a.bound, _ = strconv.ParseInt(m[1], 10, 64)
	mg.attach(t, idleOID)
	p50, p99 := quietGets(t, mg.standalone, idleOID, 1000)
	t.Logf("before the attack: 1000 GETs, p50 %v, p99 %v", p50, p99)
	return a
}

// checkReasons fails the test for a refusal that says not which limit.
func checkReasons(t *testing.T, reasons map[string]bool) {
	t.Helper()
	for r := range reasons {
		if !strings.Contains(r, "(arm.") && !strings.Contains(r, "the fixed limit per process") {
			t.Errorf("refusal %q names no setting", r)
		}
	}
}

// Issue 26: any local user reaches arm.sock. Forty programs of uid 65534
// churning rings (Hello, map the ring, close the socket, again) kept 800
// rings, 2.79 GB, though docs/ARM.md bounds a user's rings at
// arm.max_processes_per_uid files, and SNMP GETs waited up to 220 ms
// meanwhile. Now a ring counts against its user until the process that
// received it has exited or unmapped it, the refusals say which limit,
// the daemon counts the rings held, and GETs keep flowing.
func TestARMChurnStaysWithinTheUsersShare(t *testing.T) {
	const perUID = 16 // a small share, which forty churners pass many times over
	a := startARMAttackEnv(t, perUID)
	const churners, churnFor, most = 40, 2, 20
	ch := startARMAttackers(t, churners, fmt.Sprintf("%s churn %d %d", a.sock, churnFor, most))
	var results []string
	var reasons map[string]bool
	gets := a.m.sample(t, idleOID)
	results, reasons = ch.attack(t)
	figures := gets.end(t, "the churn")
	rings, size := ringsMapped(t, ch.pids())
	t.Logf("during the churn: %s; churners hold %d rings, %d bytes (bound %d); %q; refused: %v",
		figures, rings, size, a.bound, results, reasons)
	if rings == 0 {
		t.Error("no churner holds a ring: the attack did not run")
	}
	if size > a.bound || rings > perUID {
		t.Errorf("uid 65534 holds %d rings, %d bytes, beyond its share of %d rings, %d bytes (arm.max_processes_per_uid)", rings, size, perUID, a.bound)
	}
	checkReasons(t, reasons)
	// The daemon counts what they hold, and frees it when they exit.
	got := armGet(t, a.e, "Agent/arm/rings", "Agent/arm/ringbytesuid")
	if r, _ := strconv.Atoi(got["Agent/arm/rings"]); r != rings {
		t.Errorf("Agent/arm/rings %q, want the %d rings the churners map", got["Agent/arm/rings"], rings)
	}
	if b, _ := strconv.ParseInt(got["Agent/arm/ringbytesuid"], 10, 64); b != size {
		t.Errorf("Agent/arm/ringbytesuid %q, want %d", got["Agent/arm/ringbytesuid"], size)
	}
	ch.stop()
	testutil.Eventually(t, "the churners' rings to be released once they exited", time.Minute, func() bool {
		return armGet(t, a.e, "Agent/arm/rings")["Agent/arm/rings"] == "0"
	})
}

// A flood of Hellos (32 programs of uid 65534 in a loop, each
// connection closed at the Welcome) cost the daemon a ring each, about
// 2.5 ms, and a full refresh of the tree at the next GET: SNMP GETs
// waited up to 1.5 s. Now Hellos are rate-limited per user and GETs keep
// flowing.
func TestARMHelloFloodDoesNotStarveSNMP(t *testing.T) {
	a := startARMAttackEnv(t, 64)
	const flooders, floodFor = 32, 3
	fl := startARMAttackers(t, flooders, fmt.Sprintf("%s flood %d 1", a.sock, floodFor))
	var results []string
	var reasons map[string]bool
	gets := a.m.sample(t, idleOID)
	results, reasons = fl.attack(t)
	figures := gets.end(t, "the Hello flood")
	t.Logf("during the Hello flood: %s; flooders %q; refused: %v", figures, results, reasons)
	checkReasons(t, reasons)
}
