package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An alarm's command and the command settings are checked here, each
// error naming its key; a good command loads with its argv as given.
func TestAlarmCommandChecked(t *testing.T) {
	dir := t.TempDir()
	exe, plain := filepath.Join(dir, "page"), filepath.Join(dir, "plain")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plain, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	alarm := func(cmd string) string {
		return "alarms:\n  - name: a\n    expr: Mem/Real/free < 1\n    command: " + cmd + "\n"
	}
	cases := map[string]string{
		alarm("[bin/page]"):                           "alarms[0].command: \"bin/page\" is not an absolute path",
		alarm("[" + plain + "]"):                      "alarms[0].command: \"" + plain + "\" is not an executable file",
		alarm("[" + dir + "]"):                        "is not an executable file",
		alarm("[" + filepath.Join(dir, "none") + "]"): "alarms[0].command: stat",
		"alarms:\n  - name: a\n    expr: x\n    command_on_clear: true\n":     "alarms[0].command_on_clear: true without a command",
		"expressions:\n  command_timeout: 0s\n":                               "expressions.command_timeout: 0s is not from 1s to 1h",
		"expressions:\n  command_max: 0\n":                                    "expressions.command_max: 0 is not from 1 to 64",
		"expressions:\n  command_user: root\n" + alarm("["+exe+"]"):           "expressions.command_user: \"root\" is uid 0",
		"expressions:\n  command_user: \"0\"\n" + alarm("["+exe+"]"):          "is uid 0",
		"expressions:\n  command_user: no-such-user-x\n" + alarm("["+exe+"]"): "expressions.command_user: \"no-such-user-x\"",
	}
	for yaml, want := range cases {
		_, err := load(t, yaml)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one naming %q", yaml, err, want)
		}
	}
	c, err := load(t, alarm("["+exe+", --team, \"a b\"]")+"    command_on_clear: true\n")
	if err != nil {
		t.Fatal(err)
	}
	if a := c.Alarms[0]; strings.Join(a.Command, "|") != exe+"|--team|a b" || !a.CommandOnClear {
		t.Errorf("loaded %q on clear %v", a.Command, a.CommandOnClear)
	}
	if c.Expressions.CommandUser != "nobody" || c.Expressions.CommandMax != 4 {
		t.Errorf("defaults: %+v", c.Expressions)
	}
	if os.Geteuid() == 0 {
		uid, _, err := c.Expressions.CommandIDs()
		if err != nil || uid == 0 {
			t.Errorf("nobody resolves to %d, %v", uid, err)
		}
	}
}
