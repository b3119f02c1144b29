package daemon

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/icmp"

	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/rtimelan"
)

// rtlConfig is fixtureConfig measuring 127.0.0.1.
func rtlConfig(t *testing.T) *config.Config {
	c := fixtureConfig(t)
	c.RTimeLAN.Hosts = []string{"127.0.0.1"}
	return c
}

// Without ICMP sockets (an unprivileged user on a host whose
// ping_group_range excludes it) the daemon serves everything else and
// says which sysctl or capability RTime/LAN needs.
func TestRTimeLANWithoutSocketsIsOffAndSaysWhy(t *testing.T) {
	c := rtlConfig(t)
	var logs testutil.Buffer
	d, err := New(c, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	d.rtl.open = func(network, _ string) (*icmp.PacketConn, error) {
		return nil, &os.SyscallError{Syscall: "socket", Err: syscall.EPERM}
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	started := false
	defer func() {
		if !started {
			t.Logf("daemon log:\n%s", logs.String())
		}
	}()
	testutil.Eventually(t, "the daemon to start (control socket ready)", 10*time.Second, func() bool {
		return strings.Contains(logs.String(), "control socket ready")
	})
	started = true
	s := d.Hierarchy().Fresh()
	if _, err := s.Lookup("RTime/LAN/"); err == nil {
		t.Error("RTime/LAN served without sockets")
	}
	if _, err := s.Lookup("CPU/cpu0/idle"); err != nil {
		t.Errorf("CPU not served: %v", err)
	}
	for _, want := range []string{"RTime/LAN is off", "net.ipv4.ping_group_range", "CAP_NET_RAW"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A damaged state file turns RTime/LAN off and is left for the operator.
func TestRTimeLANDamagedStateIsLeftAlone(t *testing.T) {
	c := rtlConfig(t)
	file := filepath.Join(c.StateDir, rtimelan.StoreFile)
	os.WriteFile(file, []byte("{damaged"), 0o644)
	var logs testutil.Buffer
	d, err := New(c, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if d.rtl != nil || !strings.Contains(logs.String(), file) {
		t.Errorf("damaged state: rtl %v, log:\n%s", d.rtl, logs.String())
	}
	if b, _ := os.ReadFile(file); string(b) != "{damaged" {
		t.Error("the damaged file was overwritten")
	}
}

// A reload that turns RTime/LAN off is refused; one that changes hosts
// is applied.
func TestRTimeLANReload(t *testing.T) {
	c := rtlConfig(t)
	d, err := New(c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	off := *c
	off.RTimeLAN.Enabled = false
	if err := d.Reload(&off); err == nil || !strings.Contains(err.Error(), "rtime_lan.enabled") {
		t.Errorf("turning off: %v", err)
	}
	more := *c
	more.RTimeLAN.Hosts = []string{"127.0.0.1", "::1"}
	if err := d.Reload(&more); err != nil {
		t.Fatal(err)
	}
	if got := d.rtl.set.Hosts; len(got) != 2 {
		t.Errorf("settings after reload: %v", got)
	}
}
