package packaging

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/snmpdtest"
)

// cpuIdle is CPU/cpu0/idle under the default base OID (README, docs/TREE.md).
const cpuIdle = "1.3.6.1.4.1.32473.1.1.1.4.0"

// TestInstalledUnitVerifies: systemd-analyze verify accepts the installed
// unit, its man pages included, and prints nothing. systemd checks that
// ExecStart's program exists, so the copy it reads has the installed
// binary's path inside DESTDIR; nothing else changes. The unit is never
// started.
func TestInstalledUnitVerifies(t *testing.T) {
	dest := installed(t)
	pkgDeps(t)
	b, err := os.ReadFile(filepath.Join(dest, "usr/lib/systemd/system/subagent.service"))
	if err != nil {
		t.Fatal(err)
	}
	unit := string(b)
	if !strings.Contains(unit, "\nExecStart=/usr/bin/subagent ") {
		t.Fatalf("unit has no ExecStart=/usr/bin/subagent:\n%s", unit)
	}
	unit = strings.Replace(unit, "\nExecStart=/usr/bin/subagent ", "\nExecStart="+dest+"/usr/bin/subagent ", 1)
	dir := t.TempDir()
	path := filepath.Join(dir, "subagent.service") // verify wants the unit's own name
	if err := os.WriteFile(path, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runErr(dir, []string{"MANPATH=" + filepath.Join(dest, "usr/share/man")}, "systemd-analyze", "verify", path)
	if err != nil || strings.TrimSpace(out) != "" {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	// The check is real: a misspelt directive is reported.
	bad := filepath.Join(t.TempDir(), "subagent.service")
	os.WriteFile(bad, []byte(strings.Replace(unit, "ProtectHome=", "ProtectHomes=", 1)), 0o644)
	if out, _ := runErr(dir, []string{"MANPATH=" + filepath.Join(dest, "usr/share/man")}, "systemd-analyze", "verify", bad); !strings.Contains(out, "ProtectHomes") {
		t.Errorf("systemd-analyze verify did not report a misspelt directive: %q", out)
	}
}

// TestInstalledBinaryServesThroughSnmpd runs the installed binary with the
// installed configuration as an unprivileged user, attached to a real
// snmpd configured with the installed drop-in: only the socket's path and
// the group of agentXPerms are the test's (nogroup for the package's
// "subagent"). snmpd makes the socket's directory with the drop-in's
// DIRPERMS and the socket with its SOCKPERMS and group, and the subagent,
// in that group only, connects through them: a snmpget of CPU/cpu0/idle
// answers within the drop-in's view, and an OID outside it does not.
func TestInstalledBinaryServesThroughSnmpd(t *testing.T) {
	dest := installed(t)
	testutil.RequireRoot(t)
	b, err := os.ReadFile(filepath.Join(dest, "etc/snmp/snmpd.conf.d/subagent.conf"))
	if err != nil {
		t.Fatal(err)
	}
	drop := dropIn(t, string(b))
	for _, k := range []string{"master", "agentXSocket", "agentXPerms", "view"} {
		if drop[k] == "" {
			t.Fatalf("drop-in has no %s line", k)
		}
	}
	view := strings.Fields(drop["view"])[0]

	s := snmpdtest.Start(t, snmpdtest.Options{})
	// The drop-in's own directory, made by snmpd: the socket snmpdtest
	// waits for stays beside it.
	sock := filepath.Join(s.Dir, "agentx", "master")
	perms := strings.Fields(drop["agentXPerms"])
	if len(perms) != 4 {
		t.Fatalf("agentXPerms %q: want SOCKPERMS DIRPERMS USER GROUP", drop["agentXPerms"])
	}
	perms[3] = fmt.Sprint(testutil.Nobody)
	lines := []string{
		"# the installed drop-in, rewritten by packaging/service_test.go",
		"master " + drop["master"],
		"agentXSocket unix:" + sock + "," + s.AgentXAddress,
		"agentXPerms " + strings.Join(perms, " "),
		"view " + drop["view"],
		// The test's manager, limited to the drop-in's view.
		"rocommunity pkgview 127.0.0.1 -V " + view,
	}
	f, err := os.OpenFile(s.ConfPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(strings.Join(lines, "\n") + "\n")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	s.Restart()

	fi, err := os.Stat(sock)
	if err != nil {
		t.Fatalf("snmpd did not open the drop-in's socket: %v\n%s", err, s.Log())
	}
	st := fi.Sys().(*syscall.Stat_t)
	if fi.Mode().Perm() != 0o660 || st.Gid != testutil.Nobody {
		t.Errorf("socket mode %v gid %d, want 0660 gid %d", fi.Mode().Perm(), st.Gid, testutil.Nobody)
	}
	// Owned by the user snmpd drops to, where the snmpd package made it.
	if u, err := user.Lookup(perms[2]); err == nil && fmt.Sprint(st.Uid) != u.Uid {
		t.Errorf("socket owner uid %d, want %s (%s)", st.Uid, u.Uid, perms[2])
	}
	if di, err := os.Stat(filepath.Dir(sock)); err != nil || di.Mode().Perm() != 0o755 {
		t.Errorf("socket directory: %v %v, want mode 0755", di.Mode(), err)
	}

	// The daemon's user: its own run and state directories, and a way
	// through the test's directories (o+x) to the binary, the
	// configuration and the socket.
	work := filepath.Join(t.TempDir(), "daemon")
	runDir, stateDir := filepath.Join(work, "run"), filepath.Join(work, "state")
	for _, d := range []string{runDir, stateDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, testutil.Nobody, testutil.Nobody); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Traversable(t, work)
	testutil.Traversable(t, filepath.Join(dest, "usr/bin"))
	testutil.Traversable(t, filepath.Join(dest, "etc/subagent"))
	testutil.Traversable(t, s.Dir)

	log := &testutil.Buffer{}
	d := testutil.AsNobody(t, filepath.Join(dest, "usr/bin/subagent"), "run",
		"--config", filepath.Join(dest, "etc/subagent/subagent.yaml"),
		"--agentx", "unix:"+sock, "--run-dir", runDir, "--state-dir", stateDir)
	d.Stdout, d.Stderr = log, log
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- d.Wait() }()
	t.Cleanup(func() {
		d.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(time.Minute):
			d.Process.Kill()
			<-exited
			t.Errorf("daemon ignored SIGTERM for a minute\n%s", log)
		}
	})

	var vars []snmpdtest.Var
	var getErr error
	defer func() {
		if t.Failed() {
			t.Logf("last snmpget %s through the drop-in's view: %v %v\n--- daemon:\n%s\n--- snmpd:\n%s", cpuIdle, vars, getErr, log, s.Log())
		}
	}()
	testutil.Eventually(t, "the daemon's "+cpuIdle+" through the drop-in's view", 2*time.Minute, func() bool {
		select {
		case err := <-exited:
			exited <- err // for the cleanup, which waits for it
			t.Fatalf("daemon exited: %v", err)
		default:
		}
		var out string
		if out, _, getErr = s.Cmd(t.Context(), s.Tools.Snmpget, []string{"-c", "pkgview"}, cpuIdle); getErr != nil {
			return false
		}
		vars, getErr = snmpdtest.Parse(out)
		return getErr == nil && len(vars) == 1 && vars[0].Type == "Counter64"
	})
	// Outside the view: sysDescr, which the test's full community sees.
	const sysDescr = "1.3.6.1.2.1.1.1.0"
	if v, err := s.Get(sysDescr); err != nil || len(v) != 1 || v[0].Type != "STRING" {
		t.Fatalf("sysDescr with the full community: %v %v", v, err)
	}
	out, _, err := s.Cmd(t.Context(), s.Tools.Snmpget, []string{"-c", "pkgview"}, sysDescr)
	v, _ := snmpdtest.Parse(out)
	if err != nil || len(v) != 1 || v[0].Type != "noSuchObject" {
		t.Errorf("sysDescr through the drop-in's view %q: %v %v, want noSuchObject", view, v, err)
	}
}
