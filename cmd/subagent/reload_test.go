package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/snmpdtest"
)

// SIGHUP switches the standalone responder's community on the socket it
// has: the old one goes unanswered, the new one is answered. Changed
// settings that need a restart are named in one WARN. (listen is given by
// env.start's --listen flag, which outranks the file, so other
// restart-only keys stand for it here.)
func TestReloadSwitchesCommunity(t *testing.T) {
	port := snmpdtest.FreeUDPPort(t)
	e := newEnv(t)
	file := filepath.Join(t.TempDir(), "subagent.yaml")
	write := func(yaml string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("snmp:\n  community: alpha\n")
	e.start("--config", file, "--listen", fmt.Sprintf("127.0.0.1:%d", port))

	// get asks once, with a short timeout and no retry.
	get := func(community string) error {
		g := &gosnmp.GoSNMP{Target: "127.0.0.1", Port: uint16(port), Community: community,
			Version: gosnmp.Version2c, Timeout: time.Second, Retries: 0}
		if err := g.Connect(); err != nil {
			t.Fatal(err)
		}
		defer g.Conn.Close()
		r, err := g.Get([]string{idleOID})
		if err != nil {
			return err
		}
		if len(r.Variables) != 1 || r.Variables[0].Type != gosnmp.Counter64 {
			return fmt.Errorf("answered %+v", r.Variables)
		}
		return nil
	}
	testutil.Eventually(t, "community alpha answered", 10*time.Second, func() bool { return get("alpha") == nil })
	if err := get("beta"); err == nil {
		t.Fatal("community beta answered before the reload")
	}

	write("snmp:\n  community: beta\nagentx_session:\n  priority: 12\nrefresh:\n  interval: 20s\n")
	if err := e.daemon.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "the reload logged", 10*time.Second, func() bool {
		return strings.Contains(e.daemonLog.String(), "msg=reloaded")
	})
	if err := get("beta"); err != nil {
		t.Errorf("community beta after the reload: %v", err)
	}
	if err := get("alpha"); err == nil || !strings.Contains(err.Error(), "timeout") {
		t.Errorf("community alpha after the reload: %v, want a timeout", err)
	}
	log := e.daemonLog.String()
	if !strings.Contains(log, `level=WARN msg="reload: these settings need a restart to take effect" keys=agentx_session.priority,refresh.interval`) {
		t.Errorf("no WARN naming agentx_session.priority and refresh.interval:\n%s", log)
	}
	if !strings.Contains(log, "changed=snmp.community") {
		t.Errorf("the reload does not say the community changed:\n%s", log)
	}
}
