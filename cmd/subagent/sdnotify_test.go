package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/internal/sdnotify"
)

// TestDaemonNotifiesSystemd plays systemd's part for a Type=notify unit:
// the daemon must say READY=1 once it serves (and nothing before it),
// RELOADING=1 then READY=1 around a SIGHUP, and STOPPING=1 on SIGTERM.
func TestDaemonNotifiesSystemd(t *testing.T) {
	dir, err := os.MkdirTemp("", "sdn") // short: sun_path has 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "notify")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	recv := func(what string) string {
		t.Helper()
		buf := make([]byte, 4096)
		_ = c.SetReadDeadline(time.Now().Add(15 * time.Second))
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		return string(buf[:n])
	}
	t.Setenv(sdnotify.Socket, path)
	e := newEnv(t)
	e.start()
	if got := recv("READY=1"); got != sdnotify.Ready {
		t.Fatalf("first notification %q, want %q", got, sdnotify.Ready)
	}
	// Ready means serving: a client asking now is answered.
	if out, stderr, code := e.run(append([]string{"get", "CPU/cpu0/idle"}, e.args()...)...); code != 0 || !strings.Contains(out, "CPU/cpu0/idle") {
		t.Fatalf("get after READY=1: code %d, %s%s", code, out, stderr)
	}

	if err := e.daemon.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if got := recv("RELOADING=1"); !strings.HasPrefix(got, sdnotify.Reloading+"\nMONOTONIC_USEC=") {
		t.Fatalf("after SIGHUP %q, want RELOADING=1 with MONOTONIC_USEC", got)
	}
	if got := recv("READY=1 after the reload"); got != sdnotify.Ready {
		t.Fatalf("after the reload %q, want %q", got, sdnotify.Ready)
	}

	if err := e.daemon.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if got := recv("STOPPING=1"); got != sdnotify.Stopping {
		t.Fatalf("after SIGTERM %q, want %q", got, sdnotify.Stopping)
	}
	if err := e.stop(); err != nil {
		t.Fatalf("daemon exit: %v\n%s", err, e.daemonLog)
	}
}
