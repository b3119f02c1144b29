package sdnotify

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// listen opens a datagram socket as systemd does and returns a function
// that reads one message, bounded in time.
func listen(t *testing.T, name string) func() string {
	t.Helper()
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return func() string {
		t.Helper()
		buf := make([]byte, 4096)
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("no datagram: %v", err)
		}
		return string(buf[:n])
	}
}

func TestNotifyPathSocket(t *testing.T) {
	dir, err := os.MkdirTemp("", "sdn") // short: sun_path has 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "notify")
	recv := listen(t, path)
	t.Setenv(Socket, path)
	for _, msg := range []string{Ready, ReloadingNow(), Ready, Stopping} {
		sent, err := Notify(msg)
		if err != nil || !sent {
			t.Fatalf("Notify(%q) = %v, %v", msg, sent, err)
		}
		if got := recv(); got != msg {
			t.Fatalf("received %q, sent %q", got, msg)
		}
	}
}

func TestNotifyAbstractSocket(t *testing.T) {
	name := "@subagent-sdnotify-test-" + strconv.Itoa(os.Getpid())
	recv := listen(t, name)
	t.Setenv(Socket, name)
	if sent, err := Notify(Ready); err != nil || !sent {
		t.Fatalf("Notify = %v, %v", sent, err)
	}
	if got := recv(); got != Ready {
		t.Fatalf("received %q", got)
	}
}

func TestNotifyWithoutSystemdDoesNothing(t *testing.T) {
	t.Setenv(Socket, "")
	if sent, err := Notify(Ready); sent || err != nil {
		t.Fatalf("Notify without %s = %v, %v; want false, nil", Socket, sent, err)
	}
}

func TestNotifyReportsAMissingSocket(t *testing.T) {
	t.Setenv(Socket, filepath.Join(t.TempDir(), "none"))
	if sent, err := Notify(Ready); sent || err == nil {
		t.Fatalf("Notify to a missing socket = %v, %v; want an error", sent, err)
	}
	t.Setenv(Socket, "vsock:2:1234")
	if _, err := Notify(Ready); err == nil || !strings.Contains(err.Error(), "unsupported") {
		t.Fatalf("Notify to vsock = %v; want unsupported", err)
	}
}

func TestReloadingCarriesMonotonicTime(t *testing.T) {
	msg := ReloadingNow()
	first, usec, ok := strings.Cut(msg, "\n")
	if !ok || first != Reloading || !strings.HasPrefix(usec, "MONOTONIC_USEC=") {
		t.Fatalf("ReloadingNow() = %q", msg)
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(usec, "MONOTONIC_USEC="), 10, 64)
	if err != nil || n <= 0 {
		t.Fatalf("MONOTONIC_USEC in %q: %v", msg, err)
	}
}
