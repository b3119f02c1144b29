//go:build linux

package libspmi

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/dds/ddstest"
	"github.com/perfagent/subagent/internal/ctest"
)

// The library and the C programs are built once per test run into
// buildDir (TestMain removes it).
var (
	buildDir string
	buildMu  sync.Mutex
	lib      *ctest.Lib
	plainLib *ctest.Lib
	programs = map[string]string{}
)

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "libspmi-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildDir = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

// library builds the library once per test run.
func library(t testing.TB) *ctest.Lib {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if lib == nil {
		lib = ctest.Build(t, buildDir)
	}
	return lib
}

// plainLibrary builds the library once per test run as the Makefile does,
// whatever $SUBAGENT_C_SANITIZE says: for the checks of its objects and
// exported names, which a sanitizer's own names would blur.
func plainLibrary(t testing.TB) *ctest.Lib {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if plainLib == nil {
		dir := filepath.Join(buildDir, "plain")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		plainLib = ctest.BuildSan(t, dir, "")
	}
	return plainLib
}

// program is test/<src>.c linked with the shared or the static library.
func program(t testing.TB, src string, static bool) string {
	t.Helper()
	lib := library(t)
	buildMu.Lock()
	defer buildMu.Unlock()
	name := fmt.Sprintf("%s-static=%v", src, static)
	if p, ok := programs[name]; ok {
		return p
	}
	p := lib.Program(t, static, name, []string{"-std=c11", "-O2"}, filepath.Join(lib.Src, "test", src+".c"))
	programs[name] = p
	return p
}

// daemon is a real dds.Server on <run dir>/dds.sock and a hierarchy
// serving its Provider.
// daemon is a real DDS server and the hierarchy it feeds.
type daemon struct{ *ddstest.Daemon }

// startDaemon serves runDir/dds.sock (runDir "": a new temporary
// directory) until the test ends.
func startDaemon(t testing.TB, runDir string) *daemon {
	t.Helper()
	return startDaemonLimits(t, runDir, ddswire.Limits{})
}

// startDaemonLimits starts a daemon with limits other than the defaults.
func startDaemonLimits(t testing.TB, runDir string, lim ddswire.Limits) *daemon {
	t.Helper()
	return &daemon{ddstest.Start(t, runDir, lim)}
}

// want fails unless statistic path is served with relative id rel and value v.
func (d *daemon) want(t *testing.T, path, rel string, v uint64) {
	t.Helper()
	n := d.Node(path)
	if n == nil {
		t.Fatalf("%s: not served", path)
	}
	if n.Rel.String() != rel {
		t.Fatalf("%s: relative id %s, want %s", path, n.Rel, rel)
	}
	if got := n.Current(); !got.OK() || got.Uint64() != v {
		t.Fatalf("%s: value %v, want %d", path, got, v)
	}
}

// lineProc is a running C test program driven one command line at a
// time, each answered with one line.
type lineProc struct {
	t     testing.TB
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
}

// startLineProc runs bin with env added to ours; it is killed when the
// test ends.
func startLineProc(t testing.TB, bin string, env ...string) *lineProc {
	t.Helper()
	return startLineCmd(t, exec.Command(bin), env...)
}

// startLineCmd is startLineProc for a command of the caller's (one run
// as another user).
func startLineCmd(t testing.TB, cmd *exec.Cmd, env ...string) *lineProc {
	t.Helper()
	cmd.Env = append(os.Environ(), env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &lineProc{t: t, cmd: cmd, in: in, lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	return p
}

// line sends one command and returns the answer line.
func (p *lineProc) line(cmd string) string {
	p.t.Helper()
	if _, err := fmt.Fprintln(p.in, cmd); err != nil {
		p.t.Fatalf("%s: %v", cmd, err)
	}
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("%s: the driver exited", cmd)
		}
		return l
	case <-time.After(30 * time.Second):
		p.t.Fatalf("%s: no answer in 30s", cmd)
	}
	return ""
}

// okLine runs a command that must succeed and returns its answer's fields.
func (p *lineProc) okLine(cmd string) []string {
	p.t.Helper()
	l := p.line(cmd)
	f := strings.Fields(l)
	if len(f) == 0 || f[0] != "ok" {
		p.t.Fatalf("%s: %s", cmd, l)
	}
	return f[1:]
}

// sup is a running test/driver.c: one command, one answer line.
type sup struct {
	*lineProc
	file string
}

// startSup runs the driver with SUBAGENT_RUN_DIR=runDir.
func startSup(t *testing.T, static bool, runDir string, env ...string) *sup {
	t.Helper()
	p := startLineProc(t, program(t, "driver", static), append([]string{"SUBAGENT_DDS_SOCKET=", "SUBAGENT_RUN_DIR=" + runDir}, env...)...)
	return &sup{lineProc: p, file: filepath.Join(t.TempDir(), "SpmiSupl_hook")}
}

// do sends one command and returns the answer line.
func (s *sup) do(format string, args ...any) string {
	s.t.Helper()
	return s.line(fmt.Sprintf(format, args...))
}

// ok runs a command that must succeed and returns its answer's fields.
func (s *sup) ok(format string, args ...any) []string {
	s.t.Helper()
	return s.okLine(fmt.Sprintf(format, args...))
}

// fails runs a command that must fail with SpmiErrno code and an
// SpmiErrmsg containing every one of subs.
func (s *sup) fails(code int, subs []string, format string, args ...any) string {
	s.t.Helper()
	l := s.do(format, args...)
	want := fmt.Sprintf("err %d ", code)
	if !strings.HasPrefix(l, want) {
		s.t.Fatalf("%s: %q, want SpmiErrno %d", fmt.Sprintf(format, args...), l, code)
	}
	msg := strings.TrimPrefix(l, want)
	for _, sub := range subs {
		if !strings.Contains(msg, sub) {
			s.t.Fatalf("%s: SpmiErrmsg %q does not mention %q", fmt.Sprintf(format, args...), msg, sub)
		}
	}
	return msg
}

// offset runs an add and returns the slot offset.
func (s *sup) offset(format string, args ...any) int {
	s.t.Helper()
	f := s.ok(format, args...)
	n, err := strconv.Atoi(f[0])
	if err != nil {
		s.t.Fatal(err)
	}
	return n
}

// eventually polls cond for up to 5 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, what, time.Minute, cond)
}

func bothLibs(t *testing.T, f func(t *testing.T, static bool)) {
	for _, static := range []bool{false, true} {
		name := "shared"
		if static {
			name = "static"
		}
		t.Run(name, func(t *testing.T) { f(t, static) })
	}
}
