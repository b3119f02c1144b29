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
// user and says so, never logging a password; a wrong password is counted
// in Agent/snmp/wrongdigests.
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
	// A wrong password is refused and counted in the daemon's own
	// statistics (Agent/snmp), as the unknown user before the reload was.
	if _, err := v3Get(t, port, "ops2", "wrong-password", "priv-inline-2", idleOID); err == nil {
		t.Error("ops2 answered with a wrong password")
	}
	var got string
	defer func() {
		if t.Failed() {
			t.Logf("subagent get: %s", got)
		}
	}()
	testutil.Eventually(t, "Agent/snmp/wrongdigests to count it", 10*time.Second, func() bool {
		out, stderr, code := e.run(append([]string{"get", "Agent/snmp/wrongdigests", "Agent/snmp/unknownusers"}, e.args()...)...)
		got = out + stderr
		f := strings.Fields(out)
		return code == 0 && len(f) == 6 && f[1] == "1" && f[4] == "1" // ops2 before the reload was unknown
	})
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

// When the SNMPv3 engine's state cannot be read or written (here a
// directory where the file should be; a read-only state directory alike),
// the responder still serves v1/v2c and says SNMPv3 is off, unless
// snmp.users asks for v3: then the daemon does not start, naming the fix.
func TestResponderWithoutEngineState(t *testing.T) {
	e := newEnv(t)
	if err := os.MkdirAll(filepath.Join(e.state, "snmp-engine"), 0o700); err != nil {
		t.Fatal(err)
	}
	addr := snmpdtest.FreeUDPAddr(t)
	e.start("--listen", addr)
	c := snmpdtest.Target(t, addr, "public")
	waitServed(t, c, idleOID, 10*time.Second)
	if log := e.daemonLog.String(); !strings.Contains(log, "SNMPv3 is off until a restart") || !strings.Contains(log, "--state-dir") {
		t.Errorf("the log does not say SNMPv3 is off and how to fix it:\n%s", log)
	}
	if _, err := v3Get(t, portOf(t, addr), "ops", "auth-pass-1", "priv-pass-1", idleOID); err == nil {
		t.Error("SNMPv3 answered without an engine state")
	}
	if v, err := c.Get("1.3.6.1.2.1.11.3.0"); err != nil || len(v) != 1 || v[0].Value == "0" {
		t.Errorf("snmpInBadVersions after a v3 request: %v %v, want at least 1", v, err)
	}
	if v, err := c.Get("1.3.6.1.6.3.10.2.1.1.0"); err != nil || len(v) != 1 || v[0].Type != "noSuchObject" {
		t.Errorf("snmpEngineID served with SNMPv3 off: %v %v", v, err)
	}
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}

	file := filepath.Join(t.TempDir(), "subagent.yaml")
	y := "snmp:\n  users:\n    - user: ops\n      auth_protocol: SHA256\n      auth_password: auth-pass-1\n      priv_protocol: AES\n      priv_password: priv-pass-1\n"
	if err := os.WriteFile(file, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := e.run(append([]string{"run"}, e.args("--config", file, "--listen", addr, "--agentx", "none")...)...)
	if code == 0 || !strings.Contains(stderr, "snmp.users needs it") || !strings.Contains(stderr, "--state-dir") {
		t.Errorf("with snmp.users and no engine state: exit %d, stderr %q; want a refusal naming snmp.users and --state-dir", code, stderr)
	}
}
