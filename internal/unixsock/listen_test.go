package unixsock

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/client/testutil"
)

// The test binary doubles as a client run as another user: with
// UNIXSOCK_DIAL set it connects, prints what the server says, and exits.
func TestMain(m *testing.M) {
	if path := os.Getenv("UNIXSOCK_DIAL"); path != "" {
		c, err := net.Dial("unix", path)
		if err != nil {
			fmt.Println("dial:", err)
			os.Exit(2)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		line, _ := bufio.NewReader(c).ReadString('\n')
		fmt.Print(line)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serve starts a listener whose handler greets and then holds the
// connection until the peer closes it.
func serve(t *testing.T, cfg Config, before ...func(*Listener)) (*Listener, *testutil.Buffer) {
	t.Helper()
	lb := &testutil.Buffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(lb, nil))
	if cfg.Name == "" {
		cfg.Name = "test"
	}
	if cfg.Path == "" {
		cfg.Path = filepath.Join(t.TempDir(), "s.sock")
	}
	if cfg.Refuse == nil {
		cfg.Refuse = func(c *net.UnixConn, reason string) { io.WriteString(c, "refused: "+reason+"\n") }
	}
	l, err := Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range before {
		f(l)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- l.Serve(ctx, func(ctx context.Context, c *net.UnixConn, p Peer) {
			fmt.Fprintf(c, "hello uid %d\n", p.UID)
			io.Copy(io.Discard, c)
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Serve did not return after cancel")
		}
	})
	return l, lb
}

func dialLine(t *testing.T, path string) (net.Conn, string) {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var b [256]byte
	n, _ := c.Read(b[:])
	return c, string(b[:n])
}

func TestModeAndStaleSocket(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.sock")
	// A socket left by a dead daemon: bound, never listened on.
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)
	l, _ := serve(t, Config{Path: path, Mode: 0o640})
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %04o, want 0640", fi.Mode().Perm())
	}
	if _, err := Listen(Config{Name: "second", Path: path}); err == nil || !strings.Contains(err.Error(), "another daemon serves") {
		t.Errorf("second listener on a live socket: %v", err)
	}
	file := filepath.Join(dir, "plain")
	os.WriteFile(file, nil, 0o600)
	if _, err := Listen(Config{Name: "x", Path: file}); err == nil || !strings.Contains(err.Error(), "is not a socket") {
		t.Errorf("listener on a regular file: %v", err)
	}
	l.Close()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket file left after Close: %v", err)
	}
}

func TestRefusedPeerIsAnsweredAndLoggedOnce(t *testing.T) {
	l, lb := serve(t, Config{Admit: func(p Peer) error { return fmt.Errorf("uid %d is not on the list", p.UID) }})
	for range 50 {
		c, line := dialLine(t, l.Path())
		c.Close()
		if want := fmt.Sprintf("refused: uid %d is not on the list\n", os.Geteuid()); line != want {
			t.Fatalf("refused peer read %q, want %q", line, want)
		}
	}
	if n := strings.Count(lb.String(), "refused a connection"); n != 1 {
		t.Errorf("50 refusals logged %d times, want once:\n%s", n, lb)
	}
	if s := l.Stats(); s.Refused != 50 || s.Accepted != 0 {
		t.Errorf("stats %+v, want 50 refused", s)
	}
}

func TestRefusalLogCountsAndRepeatsAfterAMinute(t *testing.T) {
	lb := &testutil.Buffer{}
	r := newRefusalLog(slog.New(slog.NewTextHandler(lb, nil)), "t")
	now := time.Unix(1000, 0)
	r.fold.Now = func() time.Time { return now }
	for range 10 {
		r.note(Peer{UID: 7, PID: 1}, "bad")
	}
	r.note(Peer{UID: 8}, "bad")
	now = now.Add(refusalEvery)
	r.note(Peer{UID: 7}, "bad")
	out := lb.String()
	if strings.Count(out, "uid=7") != 2 || !strings.Contains(out, "uid=7 pid=0 reason=bad count=10") || strings.Count(out, "uid=8") != 1 {
		t.Errorf("log:\n%s", out)
	}
}

func TestLimitsInTotalAndPerUser(t *testing.T) {
	// The test runs as an owner, whom the per-user limit spares.
	l, _ := serve(t, Config{MaxConns: 3, MaxPerUID: 2}, func(l *Listener) { l.owners = Allow{} })
	uid := os.Geteuid()
	a, line := dialLine(t, l.Path())
	if line != fmt.Sprintf("hello uid %d\n", uid) {
		t.Fatalf("first: %q", line)
	}
	b, _ := dialLine(t, l.Path())
	c, line := dialLine(t, l.Path())
	c.Close()
	if !strings.Contains(line, "the limit per user") {
		t.Fatalf("third connection of one user: %q", line)
	}
	a.Close()
	testutil.Eventually(t, "a closed connection to free its place", 5*time.Second, func() bool { return l.Stats().Open == 1 })
	d, line := dialLine(t, l.Path())
	if !strings.HasPrefix(line, "hello") {
		t.Errorf("after one closed: %q", line)
	}
	b.Close()
	d.Close()
}

// TestOutOfDescriptorsSlowsDownAndRecovers lowers this process's limit of
// open files until accept fails with EMFILE: Serve must go on and admit
// peers again once descriptors are free.
func TestOutOfDescriptorsSlowsDownAndRecovers(t *testing.T) {
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	l, lb := serve(t, Config{MaxConns: 1000, MaxPerUID: 1000})
	ents, _ := os.ReadDir("/proc/self/fd")
	lim := old
	lim.Cur = uint64(len(ents) + 20)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	defer unix.Setrlimit(unix.RLIMIT_NOFILE, &old)
	// Each accepted peer costs two descriptors here (both ends): the
	// daemon side runs out while clients still connect into the backlog.
	var conns []net.Conn
	for range 40 {
		c, err := net.Dial("unix", l.Path())
		if err != nil {
			break
		}
		conns = append(conns, c)
	}
	testutil.Eventually(t, "accept to fail with EMFILE", 5*time.Second, func() bool { return l.Stats().AcceptErrors > 0 })
	if !strings.Contains(lb.String(), "too many open files") {
		t.Errorf("log does not say why accepting slowed down:\n%s", lb)
	}
	for _, c := range conns {
		c.Close()
	}
	unix.Setrlimit(unix.RLIMIT_NOFILE, &old)
	c, line := dialLine(t, l.Path())
	defer c.Close()
	if !strings.HasPrefix(line, "hello") {
		t.Fatalf("after descriptors came back: %q", line)
	}
}

// TestSupplementaryGroupAdmits connects as uid 65534 whose only
// supplementary group is on the list: SO_PEERGROUPS must show it.
func TestSupplementaryGroupAdmits(t *testing.T) {
	testutil.RequireRoot(t)
	const gid = 4321
	dir := t.TempDir()
	testutil.Traversable(t, dir)
	path := filepath.Join(dir, "s.sock")
	l, _ := serve(t, Config{Path: path, Mode: 0o666, Admit: func(p Peer) error {
		if Owners().With(nil, []uint32{gid}).Admits(p) {
			return nil
		}
		return fmt.Errorf("uid %d groups %v not allowed", p.UID, p.Groups)
	}})
	run := func(groups string) string {
		cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--groups="+groups, "--", os.Args[0])
		cmd.Env = append(os.Environ(), "UNIXSOCK_DIAL="+l.Path())
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("client: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := run(fmt.Sprint(gid)); out != "hello uid 65534\n" {
		t.Errorf("peer in group %d: %q", gid, out)
	}
	if out := run("4322"); !strings.Contains(out, "refused: uid 65534 groups [4322] not allowed") {
		t.Errorf("peer in another group: %q", out)
	}
}
