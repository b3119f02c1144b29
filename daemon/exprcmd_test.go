package daemon

import (
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/config"
)

// A firing alarm runs its configured command as uid 65534 with the
// alarm's values in its environment; the evaluation does not wait for
// it; at command_timeout its process group is killed, and Agent/expr
// counts the run and the kill.
func TestAlarmCommandRunsWithoutBlocking(t *testing.T) {
	testutil.RequireRoot(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	testutil.Traversable(t, dir)
	script, out := filepath.Join(dir, "cmd.sh"), filepath.Join(dir, "out")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n{ env; id -u; } > \"$1.tmp\"; mv \"$1.tmp\" \"$1\"; sleep 300\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := fixtureConfig(t)
	c.Expressions.CommandUser, c.Expressions.CommandTimeout = strconv.Itoa(testutil.Nobody), time.Second
	c.Alarms = []config.AlarmConf{{Name: "memfree", Expr: "Mem/Real/free > 0", For: 1, Severity: 3, Command: []string{script, out}}}
	d, err := New(c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	d.expr.evaluate(d.h)
	took := time.Since(start)
	if took > 500*time.Millisecond {
		t.Errorf("the evaluation that started a command of 300s took %v", took)
	}
	testutil.Eventually(t, "the command's output", 10*time.Second, func() bool { _, err := os.Stat(out); return err == nil })
	d.expr.runner.Wait()
	t.Logf("evaluation %v; the command killed %v after the start (timeout 1s)", took, time.Since(start))
	b, _ := os.ReadFile(out)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if uid := lines[len(lines)-1]; uid != strconv.Itoa(testutil.Nobody) {
		t.Errorf("ran as uid %s, want %d", uid, testutil.Nobody)
	}
	for _, want := range []string{"ALARM_NAME=memfree", "ALARM_INSTANCE=", "ALARM_STATE=firing", "ALARM_SEVERITY=3", "ALARM_CONDITION=Mem/Real/free > 0"} {
		if !strings.Contains("\n"+string(b), "\n"+want+"\n") {
			t.Errorf("environment lacks %q:\n%s", want, b)
		}
	}
	if !strings.Contains("\n"+string(b), "\nALARM_VALUE=1\n") {
		t.Errorf("ALARM_VALUE is not the condition's value 1:\n%s", b)
	}
	d.h.Invalidate()
	s := d.h.Refresh()
	for stat, want := range map[string]uint64{"cmdruns": 1, "cmdkilled": 1, "cmddropped": 0} {
		smp, err := s.Read([]string{"Agent/expr/" + stat}) // live: read through an answer
		if err != nil || smp.Items[0].Err != nil || smp.Items[0].Value.Uint64() != want {
			t.Errorf("Agent/expr/%s: %+v %v, want %d", stat, smp.Items, err, want)
		}
	}
}

// A daemon running as root refuses an alarm's command without a user to
// run it as, naming the setting.
func TestAlarmCommandNeedsUserAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	c := fixtureConfig(t)
	c.Expressions.CommandUser = ""
	c.Alarms = []config.AlarmConf{{Name: "a", Expr: "Mem/Real/free > 0", Command: []string{"/bin/true"}}}
	if _, err := New(c, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "expressions.command_user: empty") {
		t.Errorf("started with no command_user as root: %v", err)
	}
}
