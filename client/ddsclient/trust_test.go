package ddsclient

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfagent/subagent/client/rundir"
	"github.com/perfagent/subagent/client/testutil"
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

// The default socket is $SUBAGENT_DDS_SOCKET, else dds.sock where
// rundir.Find looks (its tests cover the order and the trust checks).
func TestSocketPathFollowsTheRunDirectoryOrder(t *testing.T) {
	t.Setenv("SUBAGENT_DDS_SOCKET", "/x/d.sock")
	if p := SocketPath(); p != "/x/d.sock" {
		t.Fatalf("with SUBAGENT_DDS_SOCKET: %s", p)
	}
	t.Setenv("SUBAGENT_DDS_SOCKET", "")
	dir := t.TempDir()
	t.Setenv("SUBAGENT_RUN_DIR", dir)
	if p := SocketPath(); p != filepath.Join(dir, "dds.sock") {
		t.Fatalf("with SUBAGENT_RUN_DIR: %s", p)
	}
	t.Setenv("SUBAGENT_RUN_DIR", "")
	if p, want := SocketPath(), filepath.Join(rundir.Find("dds.sock"), "dds.sock"); p != want {
		t.Fatalf("SocketPath %s, rundir.Find gives %s", p, want)
	}
}
