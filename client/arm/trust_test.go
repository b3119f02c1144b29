package arm

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/internal/testutil"
)

// A program never connects to arm.sock in a directory another user could
// have made (0777 and owned by uid 65534): that user could hand it a file
// of its choosing. The error names the directory.
func TestUntrustedRunDirRefused(t *testing.T) {
	testutil.RequireRoot(t)
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, SocketName)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := os.Chown(dir, testutil.Nobody, testutil.Nobody); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SUBAGENT_RUN_DIR", dir)
	if s := Sockets(); len(s) != 1 || s[0] != sock {
		t.Fatalf("Sockets %v", s)
	}
	_, err = dial(sock, "trust", time.Second)
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "not trusted") {
		t.Fatalf("dial: %v, want a refusal naming %s", err, dir)
	}
	a := Open(&Options{Retry: 10 * time.Millisecond})
	defer a.Close()
	ln.SetDeadline(time.Now().Add(300 * time.Millisecond))
	if c, err := ln.Accept(); err == nil {
		c.Close()
		t.Fatal("the library connected to a socket in an untrusted directory")
	}
	if a.cur.Load() != nil {
		t.Fatal("the agent has a ring from an untrusted directory")
	}
}
