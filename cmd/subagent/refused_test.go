package main

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfagent/subagent/internal/snmpdtest"
)

// dirState is what a directory holds: each entry's path, type, mode and,
// for a file, its content; "absent" when it does not exist.
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		v := fi.Mode().String()
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		}
		out[p] = v
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{dir: "absent"}
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// show lists a dirState, one entry a line.
func show(m map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "\n  %s: %q", k, m[k])
	}
	return b.String()
}

// A start that is refused changes nothing on disk and leaves no
// directory: a listen address that cannot be resolved or bound, a bad
// configuration, another daemon on the run directory. snmpEngineBoots
// grows by one per start that serves, never for a refused one.
func TestRefusedStartLeavesNoTrace(t *testing.T) {
	e := newEnv(t)
	all := func() map[string]string {
		m := dirState(t, e.state)
		maps.Copy(m, dirState(t, e.runDir))
		return m
	}
	snapshot := all
	refused := func(what, want string, extra ...string) {
		t.Helper()
		before := snapshot()
		_, stderr, code := e.run(append([]string{"run"}, e.args(extra...)...)...)
		if code == 0 || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, stderr %q; want a refusal saying %q", what, code, stderr, want)
		}
		if now := snapshot(); !maps.Equal(before, now) {
			t.Errorf("%s changed the directories:\nbefore %s\nafter  %s", what, show(before), show(now))
		}
	}
	addr := snmpdtest.FreeUDPAddr(t)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("refresh:\n  interval: soon\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	busy, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()

	// Neither directory exists yet: a refused start makes neither.
	refused("a port out of range", "99999", "--listen", "127.0.0.1:99999")
	refused("a busy port", "address already in use", "--listen", busy.LocalAddr().String())
	refused("a bad configuration", "refresh.interval", "--config", bad, "--listen", addr)

	boots := func(want string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(e.state, "snmp-engine"))
		if err != nil || !strings.Contains(string(b), "\nboots "+want+"\n") {
			t.Fatalf("snmp-engine: %q %v, want boots %s", b, err, want)
		}
	}
	// A start that serves counts itself once.
	e.start("--listen", addr)
	boots("1")
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	boots("1")

	// The directories exist now (the state one; the run directory is
	// made beforehand): still nothing changes.
	if err := os.Mkdir(e.runDir, 0o750); err != nil {
		t.Fatal(err)
	}
	refused("a busy port, directories there", "address already in use", "--listen", busy.LocalAddr().String())
	refused("a bad configuration, directories there", "refresh.interval", "--config", bad, "--listen", addr)

	// Another daemon serves the run directory (without the responder, so
	// that only the refused start could count boots). It writes its own
	// state as it pleases: the run directory and the engine's state are
	// compared.
	e.start()
	snapshot = func() map[string]string {
		m := dirState(t, e.runDir)
		maps.Copy(m, dirState(t, filepath.Join(e.state, "snmp-engine")))
		return m
	}
	refused("a second daemon", "another daemon serves", "--listen", addr)
	// ... also with a state directory of its own, which it does not make.
	fresh := filepath.Join(t.TempDir(), "state")
	if _, stderr, code := e.run(append([]string{"run"}, e.args("--listen", addr, "--state-dir", fresh)...)...); code == 0 || !strings.Contains(stderr, "another daemon serves") {
		t.Errorf("a second daemon, state directory of its own: exit %d\n%s", code, stderr)
	}
	if _, err := os.Lstat(fresh); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the refused second daemon made its state directory: %v", err)
	}
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	boots("1")
	e.start("--listen", addr)
	boots("2")
}
