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

	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/internal/testutil"
)

// v3Get asks the responder once as a v3 user (SHA-256/AES) for oid.
func v3Get(t *testing.T, port int, user, authPass, privPass, oid string) (gosnmp.SnmpPDU, error) {
	t.Helper()
	g := &gosnmp.GoSNMP{Target: "127.0.0.1", Port: uint16(port), Version: gosnmp.Version3,
		SecurityModel: gosnmp.UserSecurityModel, MsgFlags: gosnmp.AuthPriv, Timeout: 2 * time.Second, Retries: 0,
		SecurityParameters: &gosnmp.UsmSecurityParameters{UserName: user, AuthenticationProtocol: gosnmp.SHA256,
			AuthenticationPassphrase: authPass, PrivacyProtocol: gosnmp.AES, PrivacyPassphrase: privPass}}
	if err := g.Connect(); err != nil {
		t.Fatal(err)
	}
	defer g.Conn.Close()
	r, err := g.Get([]string{oid})
	if err != nil {
		return gosnmp.SnmpPDU{}, err
	}
	if len(r.Variables) != 1 {
		return gosnmp.SnmpPDU{}, fmt.Errorf("%d varbinds", len(r.Variables))
	}
	return r.Variables[0], nil
}

// The daemon with snmp.users and no community: v3 answers (a password
// from a file), v2c does not; snmpEngineBoots is 1, then 2 after a
// SIGKILL and a restart (written before the first answer); SIGHUP adds a
// user and says so, never logging a password.
func TestDaemonSNMPv3BootsAndReload(t *testing.T) {
	port := snmpdtest.FreeUDPPort(t)
	e := newEnv(t)
	dir := t.TempDir()
	passFile := filepath.Join(dir, "ops.auth")
	if err := os.WriteFile(passFile, []byte("auth-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "subagent.yaml")
	users := fmt.Sprintf(`snmp:
  community: ""
  users:
    - user: ops
      auth_protocol: SHA256
      auth_password_file: %s
      priv_protocol: AES
      priv_password: priv-inline-1
`, passFile)
	if err := os.WriteFile(file, []byte(users), 0o600); err != nil {
		t.Fatal(err)
	}
	const bootsOID = "1.3.6.1.6.3.10.2.1.2.0"
	boots := func() int {
		var v gosnmp.SnmpPDU
		testutil.Eventually(t, "v3 answered", 20*time.Second, func() bool {
			var err error
			v, err = v3Get(t, port, "ops", "auth-from-file", "priv-inline-1", bootsOID)
			return err == nil
		})
		return v.Value.(int)
	}
	args := []string{"--config", file, "--listen", fmt.Sprintf("127.0.0.1:%d", port)}
	e.start(args...)
	if b := boots(); b != 1 {
		t.Errorf("snmpEngineBoots %d at the first start", b)
	}
	g := &gosnmp.GoSNMP{Target: "127.0.0.1", Port: uint16(port), Community: "public", Version: gosnmp.Version2c, Timeout: time.Second}
	if err := g.Connect(); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Get([]string{idleOID}); err == nil {
		t.Error("v2c answered with community \"\"")
	}
	g.Conn.Close()
	e.daemon.Process.Kill()
	<-e.daemonExited
	e.stopped = true
	e.start(args...)
	if b := boots(); b != 2 {
		t.Errorf("snmpEngineBoots %d after a SIGKILL and a restart, want 2", b)
	}
	if err := os.WriteFile(file, []byte(users+`    - user: ops2
      auth_protocol: SHA256
      auth_password: auth-inline-2
      priv_protocol: AES
      priv_password: priv-inline-2
`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := v3Get(t, port, "ops2", "auth-inline-2", "priv-inline-2", idleOID); err == nil {
		t.Fatal("ops2 answered before the reload")
	}
	e.daemon.Process.Signal(syscall.SIGHUP)
	testutil.Eventually(t, "the reload logged", 10*time.Second, func() bool {
		return strings.Contains(e.daemonLog.String(), "responder settings applied")
	})
	if v, err := v3Get(t, port, "ops2", "auth-inline-2", "priv-inline-2", idleOID); err != nil || v.Type != gosnmp.Counter64 {
		t.Errorf("ops2 after the reload: %v %v", v.Type, err)
	}
	log := e.daemonLog.String()
	if !strings.Contains(log, "added=[ops2]") || !strings.Contains(log, "snmpv3_users=2") {
		t.Errorf("the reload does not say it added ops2:\n%s", log)
	}
	for _, secret := range []string{"auth-from-file", "priv-inline", "auth-inline-2"} {
		if strings.Contains(log, secret) {
			t.Errorf("the log holds a password (%s)", secret)
		}
	}
}
