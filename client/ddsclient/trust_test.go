package ddsclient

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfagent/subagent/client/internal/testutil"
)

// untrusted makes dir look made by another user: owned by uid 65534, and
// either writable by all or (mode 0755) inside a parent open to all.
func untrusted(t *testing.T, dir string, mode os.FileMode) {
	t.Helper()
	testutil.RequireRoot(t)
	if err := os.Chown(dir, testutil.Nobody, testutil.Nobody); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(dir), 0o1777); err != nil {
		t.Fatal(err)
	}
}

// A supplier never sends its file to a socket in a directory another user
// could have made: whoever can replace the socket would get the file's
// descriptor. The refusal names the directory and is not ErrDisconnected.
func TestUntrustedRunDirRefused(t *testing.T) {
	for _, mode := range []os.FileMode{0o777, 0o755} {
		f := newFake(t)
		dir := filepath.Dir(f.sock)
		untrusted(t, dir, mode)
		for _, env := range []bool{false, true} {
			opt := &Options{Socket: f.sock}
			if env {
				opt.Socket = ""
				t.Setenv("SUBAGENT_DDS_SOCKET", "")
				t.Setenv("SUBAGENT_RUN_DIR", dir)
			}
			_, err := Start(newGuide().v, filepath.Join(t.TempDir(), "sup.dds"), opt)
			if err == nil || errors.Is(err, ErrDisconnected) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "not trusted") {
				t.Fatalf("mode %04o, env %v: %v, want a refusal naming %s", mode, env, err, dir)
			}
		}
		f.mu.Lock()
		n := len(f.inits)
		f.mu.Unlock()
		if n != 0 {
			t.Fatalf("mode %04o: the socket got %d registrations", mode, n)
		}
		// The same socket in a trusted directory is used.
		if err := os.Chown(dir, 0, 0); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		s, err := Start(newGuide().v, filepath.Join(t.TempDir(), "sup.dds"), &Options{Socket: f.sock})
		if err != nil {
			t.Fatalf("trusted directory: %v", err)
		}
		s.Exit()
	}
}

// The default search skips a socket in an untrusted directory.
func TestSocketPathSkipsUntrusted(t *testing.T) {
	f := newFake(t)
	xdg := filepath.Dir(filepath.Dir(f.sock))
	sub := filepath.Join(xdg, "subagent")
	if err := os.Rename(filepath.Dir(f.sock), sub); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SUBAGENT_DDS_SOCKET", "")
	t.Setenv("SUBAGENT_RUN_DIR", "")
	t.Setenv("XDG_RUNTIME_DIR", xdg)
	if fi, err := os.Stat("/run/subagent/dds.sock"); err == nil && fi.Mode()&os.ModeSocket != 0 {
		t.Fatal("a daemon's socket exists at /run/subagent/dds.sock: the search would find it first; stop that daemon")
	}
	if p := SocketPath(); p != filepath.Join(sub, "dds.sock") {
		t.Fatalf("trusted %s: SocketPath %s", sub, p)
	}
	untrusted(t, sub, 0o777)
	if p := SocketPath(); p == filepath.Join(sub, "dds.sock") {
		t.Fatalf("SocketPath chose %s in an untrusted directory", p)
	}
}
