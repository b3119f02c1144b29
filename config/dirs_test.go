package config

import (
	"path/filepath"
	"strings"
	"testing"
)

// asUID makes the defaults those of uid.
func asUID(t *testing.T, uid int) {
	old := geteuid
	geteuid = func() int { return uid }
	t.Cleanup(func() { geteuid = old })
}

// A non-root daemon with neither XDG_RUNTIME_DIR nor a home gets no
// default directories (the daemon makes private ones), never a fixed name
// in /tmp that another user could create first.
func TestNonRootDefaultsNeverInTmp(t *testing.T) {
	asUID(t, 1000)
	for _, k := range []string{"XDG_RUNTIME_DIR", "XDG_STATE_HOME", "HOME", "SUBAGENT_RUN_DIR", "SUBAGENT_STATE_DIR", "SUBAGENT_DDS_SOCKET", "SUBAGENT_CONFIG"} {
		t.Setenv(k, "")
	}
	c, err := load(t, "")
	if err != nil {
		t.Fatalf("empty run_dir and state_dir must load: %v", err)
	}
	if c.RunDir != "" || c.StateDir != "" || c.DDS.Socket != "" {
		t.Fatalf("run_dir %q state_dir %q dds.socket %q, want all empty", c.RunDir, c.StateDir, c.DDS.Socket)
	}

	home := t.TempDir()
	t.Setenv("HOME", home)
	if got := defaultStateDir(); got != filepath.Join(home, ".local", "state", "subagent") {
		t.Fatalf("state dir with HOME: %q", got)
	}
	if got := defaultRunDir(); got != "" {
		t.Fatalf("run dir with HOME only: %q", got)
	}
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/1000")
	t.Setenv("XDG_STATE_HOME", "/home/u/.state")
	if got := defaultRunDir(); got != "/run/user/1000/subagent" {
		t.Fatalf("run dir: %q", got)
	}
	if got := defaultStateDir(); got != "/home/u/.state/subagent" {
		t.Fatalf("state dir: %q", got)
	}
	c, err = load(t, "")
	if err != nil || c.RunDir != "/run/user/1000/subagent" || c.DDS.Socket != "" {
		t.Fatalf("run_dir %q dds.socket %q (want it left to follow the run directory), %v", c.RunDir, c.DDS.Socket, err)
	}

	asUID(t, 0)
	if defaultRunDir() != "/run/subagent" || defaultStateDir() != "/var/lib/subagent" {
		t.Fatalf("root: %q %q", defaultRunDir(), defaultStateDir())
	}
	for _, uid := range []int{1, 1000, 65534} {
		asUID(t, uid)
		t.Setenv("XDG_RUNTIME_DIR", "")
		t.Setenv("XDG_STATE_HOME", "")
		t.Setenv("HOME", "")
		if d := defaultRunDir() + defaultStateDir(); strings.Contains(d, "/tmp") {
			t.Fatalf("uid %d: default in /tmp: %q", uid, d)
		}
	}
}

// A relative run_dir is still refused; only empty means "decide later".
func TestRelativeDirsRefused(t *testing.T) {
	_, err := load(t, "", "--run-dir", "run", "--state-dir", "state")
	if err == nil || !strings.Contains(err.Error(), "run_dir") || !strings.Contains(err.Error(), "state_dir") {
		t.Fatalf("relative dirs: %v", err)
	}
}
