package arm

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/client/testutil"
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
	// Open's attempt and two retries, each over when the next is scheduled.
	waits := make(chan time.Duration, 1)
	fire := make(chan time.Time)
	a := Open(&Options{Retry: time.Second, after: func(d time.Duration) <-chan time.Time {
		waits <- d
		return fire
	}})
	defer a.Close()
	for i := range 3 {
		select {
		case <-waits:
		case <-time.After(10 * time.Second):
			t.Fatalf("attempt %d was not followed by a retry", i+1)
		}
		if i < 2 {
			fire <- time.Time{}
		}
	}
	// A connect would be queued on the listener by now: accept without
	// blocking (Go's listener descriptor is non-blocking).
	rc, err := ln.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fd int
	var aerr error
	if err := rc.Control(func(l uintptr) { fd, _, aerr = unix.Accept4(int(l), unix.SOCK_CLOEXEC) }); err != nil {
		t.Fatal(err)
	}
	if aerr == nil {
		unix.Close(fd)
		t.Fatal("the library connected to a socket in an untrusted directory")
	}
	if aerr != unix.EAGAIN {
		t.Fatalf("accept: %v", aerr)
	}
	if a.cur.Load() != nil {
		t.Fatal("the agent has a ring from an untrusted directory")
	}
}
