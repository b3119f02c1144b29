// Package testutil is for tests only: what the tests of the client module
// and of the daemon's module share (one polling helper bounded in time,
// running a command as another local user, the attacker of the
// local-trust tests, and a child's log). It lives here, exported, because
// the daemon's module can import the client module but not the other way
// round; it imports the standard library only.
package testutil

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Nobody is the uid and gid the attacker runs as (Debian's nobody/nogroup).
const Nobody = 65534

// Eventually polls cond every 10 ms until it holds or within passes, then
// fails the test naming what it waited for.
func Eventually(t testing.TB, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// RequireRoot fails (never skips) a test that needs root to act as another
// user: CI runs as root, so a skip there would hide a missing check.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatalf("this test runs an attacker as uid %d with setpriv and needs root; run it as root (CI does)", Nobody)
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Fatalf("setpriv (util-linux) is needed to run as uid %d: %v", Nobody, err)
	}
}

// AsNobody returns a command that runs name with args as uid and gid 65534
// with no supplementary groups. It dies with the test process (Pdeathsig).
func AsNobody(t testing.TB, name string, args ...string) *exec.Cmd {
	t.Helper()
	RequireRoot(t)
	a := append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", "--", name}, args...)
	cmd := exec.Command("setpriv", a...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// Traversable makes dir and each of its parents up to the root searchable
// by others (o+x), so another user can reach a socket inside t.TempDir().
func Traversable(t testing.TB, dir string) {
	t.Helper()
	for d := dir; d != "/" && d != "."; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(d, fi.Mode().Perm()|0o011); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Buffer is a bytes.Buffer that a logger or a child's output goroutine and
// the test may use at once.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Tail returns the last n lines of s, for a failing test's report of a
// child's log.
func Tail(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return s
	}
	i := len(s)
	for ; n > 0 && i > 0; n-- {
		i = strings.LastIndexByte(s[:i], '\n')
		if i < 0 {
			return s
		}
	}
	return s[i+1:]
}

// FileSize is the size of file; the test fails if it cannot be read.
func FileSize(t testing.TB, file string) int64 {
	t.Helper()
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// CopyTree copies the directory src to dst, symbolic links as links, for
// tests that change a fixture (a /proc whose processes come and go).
func CopyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
