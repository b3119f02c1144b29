package alarmcmd

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/foldlog"
)

// script writes an executable shell script into a directory uid 65534
// can reach and write, and returns its path and the directory.
func script(t *testing.T, body string) (path, dir string) {
	t.Helper()
	dir = t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	testutil.Traversable(t, dir)
	path = filepath.Join(dir, "cmd.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, dir
}

var nobody = &syscall.Credential{Uid: testutil.Nobody, Gid: testutil.Nobody}

// A command runs as uid 65534 with the alarm's values in its environment
// and nothing of the daemon's; its arguments reach it as given.
func TestCommandRunsAsUserWithEnv(t *testing.T) {
	testutil.RequireRoot(t)
	path, dir := script(t, `id -u > "$1"; id -g >> "$1"; env >> "$1"; echo done`)
	out := filepath.Join(dir, "out")
	t.Setenv("DAEMON_ONLY_SECRET", "daemon's")
	var logs bytes.Buffer
	r := &Runner{Max: 1, Timeout: 30 * time.Second, Cred: nobody, Log: foldlog.New(slog.New(slog.NewTextHandler(&logs, nil)), slog.LevelInfo)}
	env := Env("memlow", "hd0; rm -rf /", "firing", "9.5", 2, "Mem/Real/%free < 10", time.Unix(1800000000, 0))
	r.Run("memlow", []string{path, out}, env)
	r.Wait()
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the command wrote nothing: %v (log %q)", err, logs.String())
	}
	lines := strings.Split(string(b), "\n")
	if lines[0] != strconv.Itoa(testutil.Nobody) || lines[1] != strconv.Itoa(testutil.Nobody) {
		t.Errorf("ran as uid %s gid %s, want %d", lines[0], lines[1], testutil.Nobody)
	}
	for _, want := range []string{"ALARM_NAME=memlow", "ALARM_INSTANCE=hd0; rm -rf /", "ALARM_STATE=firing", "ALARM_VALUE=9.5",
		"ALARM_SEVERITY=2", "ALARM_CONDITION=Mem/Real/%free < 10", "ALARM_TIME=2027-01-15T08:00:00Z"} {
		if !strings.Contains(string(b), "\n"+want+"\n") {
			t.Errorf("environment lacks %q:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), "DAEMON_ONLY_SECRET") {
		t.Errorf("the daemon's environment reached the command:\n%s", b)
	}
	if c := r.Counts(); c.Run != 1 || c.Failed != 0 {
		t.Errorf("counts %+v", c)
	}
	if !strings.Contains(logs.String(), "output=done") {
		t.Errorf("the output is not logged: %q", logs.String())
	}
}

// A command past its timeout is killed with its process group: a child
// it started in the background dies with it, and Wait does not wait for
// the child's sleep.
func TestCommandKilledWithGroup(t *testing.T) {
	testutil.RequireRoot(t)
	path, dir := script(t, `sleep 300 & echo $! > "$1"; sleep 300`)
	pidf := filepath.Join(dir, "pid")
	var logs bytes.Buffer
	r := &Runner{Max: 1, Timeout: 500 * time.Millisecond, Cred: nobody, Log: foldlog.New(slog.New(slog.NewTextHandler(&logs, nil)), slog.LevelInfo)}
	start := time.Now()
	r.Run("slow", []string{path, pidf}, nil)
	r.Wait()
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the command ended %v after it started, its timeout is 500ms", took)
	}
	if c := r.Counts(); c.Killed != 1 {
		t.Errorf("counts %+v, want 1 killed", c)
	}
	b, err := os.ReadFile(pidf)
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(b))
	testutil.Eventually(t, "the background child "+pid+" to die", 10*time.Second, func() bool {
		st, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return true // gone
		}
		f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:]))
		return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
	})
	t.Logf("killed after %v", time.Since(start))
}
