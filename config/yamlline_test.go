package config

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/perfagent/subagent/configs"
)

// A YAML mistake is reported at its line, with the line's text, not at the
// line where the enclosing block starts (yaml.v3 alone says "line 14" for a
// list item under "key: []" three hundred lines further down).
func TestYAMLErrorNamesTheLine(t *testing.T) {
	lines := strings.Split(string(configs.Default), "\n")
	at := slices.Index(lines, "rtime_lan:")
	if at < 100 {
		t.Fatalf("rtime_lan: at line %d of the shipped file", at+1)
	}
	broken := slices.Concat(lines[:at], []string{"hotsets: []", "  - name: a"}, lines[at:])
	for name, c := range map[string]struct{ yaml, want string }{
		"a list item after []":  {strings.Join(broken, "\n"), "line " + strconv.Itoa(at+2) + `: did not find expected key: "  - name: a"`},
		"a tab":                 {"log:\n  level: info\n\tformat: text\n", `line 3: found a tab character that violates indentation: "\tformat: text"`},
		"an unclosed flow list": {"base_oid: 1.3.6.1\nrtime_lan:\n  hosts: [a, b\nlog:\n  level: info\n", `line 3: `},
		"a duplicate key":       {"log:\n  level: info\nsnmp:\n  community: a\nlog:\n  level: warn\n", `line 5: mapping key "log" already defined at line 1`},
	} {
		_, err := load(t, c.yaml)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %q", name, err, c.want)
		}
	}
}
