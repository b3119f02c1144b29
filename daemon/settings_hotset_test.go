package daemon

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/configs"
	"github.com/perfagent/subagent/hotset"
)

// examples finds the commented example list that follows "#key:" in the
// shipped configuration's lines: the key's line and each example's lines.
func examples(t *testing.T, lines []string, key string) (head int, items [][]int) {
	t.Helper()
	head = slices.Index(lines, "#"+key+":")
	if head < 0 {
		t.Fatalf("the shipped configuration has no commented %s:", key)
	}
	for i := head + 1; i < len(lines) && strings.HasPrefix(lines[i], "#  "); i++ {
		if strings.HasPrefix(lines[i], "#  - ") {
			items = append(items, nil)
		}
		items[len(items)-1] = append(items[len(items)-1], i)
	}
	return head, items
}

// uncommented returns key's commented examples, all of them, as YAML.
func uncommented(t *testing.T, key string) string {
	lines := strings.Split(string(configs.Default), "\n")
	head, items := examples(t, lines, key)
	out := lines[head][1:] + "\n"
	for _, it := range items {
		for _, i := range it {
			out += lines[i][1:] + "\n"
		}
	}
	return out
}

// Uncommenting, as the shipped file says, the list's key and any one
// example (or all) in a copy of the whole file gives a configuration that
// loads and holds that example.
func TestShippedExamplesUncomment(t *testing.T) {
	for _, key := range []string{"hotsets", "traps"} {
		lines := strings.Split(string(configs.Default), "\n")
		head, items := examples(t, lines, key)
		if len(items) < 2 {
			t.Fatalf("%s: %d examples", key, len(items))
		}
		for n := -1; n < len(items); n++ {
			copied := slices.Clone(lines)
			copied[head] = copied[head][1:]
			for j, it := range items {
				for _, i := range it {
					if n == -1 || n == j {
						copied[i] = copied[i][1:]
					}
				}
			}
			c, err := load(t, strings.Join(copied, "\n"))
			if err != nil {
				t.Errorf("%s, example %d uncommented (-1: all): %v", key, n, err)
				continue
			}
			want := 1
			if n == -1 {
				want = len(items)
			}
			if got := len(c.Hotsets) + len(c.Traps); got != want {
				t.Errorf("%s, example %d uncommented: %d hotsets and traps, want %d", key, n, got, want)
			}
		}
	}
}

// The shipped examples, uncommented, are valid and mean what the issue
// lists.
func TestShippedHotsetExamples(t *testing.T) {
	c, err := load(t, uncommented(t, "hotsets")+uncommented(t, "traps"))
	if err != nil {
		t.Fatal(err)
	}
	defs, err := hotsetDefs(c)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"busydisks Disk/*/busy 3 80", "topcpu Proc/pid/*/usercpu 5 0", "idlecpu CPU/*/idle 4 -10", "slowarm RTime/ARM/*/respavg 5 2000"}
	if len(defs) != len(want) {
		t.Fatalf("%d examples: %+v", len(defs), defs)
	}
	var traps []int
	for i, d := range defs {
		if got := d.Name + " " + d.Path() + " " + itoa(d.MaxResp) + " " + itoa(d.Threshold); got != want[i] {
			t.Errorf("example %d: %s, want %s", i, got, want[i])
		}
		if d.Excp.Traps() {
			traps = append(traps, d.TrapNo)
		}
	}
	if len(traps) != 3 || traps[0] != 1 || traps[1] != 2 || traps[2] != 3 {
		t.Errorf("example trap numbers %v, want 1 2 3 (mib.ExampleTrapNumbers)", traps)
	}
	if d := trapDests(c); len(d) != 2 || d[1].Version != "v3" || !d[1].Inform || d[1].PrivPass == "" {
		t.Errorf("trap examples: %+v", d)
	}
	if defs[0].Feed != hotset.FeedThreshold || defs[0].Excp != hotset.ExcpBoth || defs[0].Frequency != 5*time.Minute {
		t.Errorf("busydisks: %+v", defs[0])
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// The hotsets and trap destinations their packages refuse stop the load
// naming the key (the keys' types: config's TestHotsetErrorsNameTheKey).
func TestHotsetErrorsNameTheKey(t *testing.T) {
	item := "hotsets:\n  - name: a\n    stat: Disk/*/busy\n    feed_type: threshold\n    excp_type: none\n"
	if _, err := load(t, item); err != nil {
		t.Fatalf("a valid hotset: %v", err)
	}
	for yaml, want := range map[string]string{
		strings.Replace(item, "Disk/*/busy", "Disk/busy", 1):                                           "hotsets[0].stat:",
		strings.Replace(item, "excp_type: none", "excp_type: trap", 1):                                 "hotsets[0]: SiBadArgument (187): hotset \"a\": maxresp: must be non-zero",
		strings.Replace(item, "threshold\n", "sometimes\n", 1):                                         "hotsets[0].feed_type: \"sometimes\" is not none, threshold or always",
		item + item[len("hotsets:\n"):]:                                                                "hotsets[1].name: \"a\" is already the name",
		"traps:\n  - address: 127.0.0.1:162\n    version: v2\n":                                        "traps[0].version: \"v2\" is not v1, v2c or v3",
		"traps:\n  - address: 127.0.0.1:162\n    version: v3\n    user: u\n    auth_password: short\n": "traps[0].auth_password: at least 8",
	} {
		_, err := load(t, yaml)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q:\n got %v\nwant %q", yaml, err, want)
		}
	}
}

func TestTrapV3PasswordsRequired(t *testing.T) {
	v3 := "traps:\n  - address: 127.0.0.1:162\n    version: v3\n    user: u\n"
	if _, err := load(t, v3+"    auth_protocol: SHA\n    auth_password: 12345678\n    priv_protocol: AES\n    priv_password: abcdefgh\n"); err != nil {
		t.Fatalf("a complete v3 destination: %v", err)
	}
	for yaml, want := range map[string]string{
		v3 + "    auth_protocol: SHA\n":                                  "traps[0].auth_password: must be set with auth_protocol SHA",
		v3 + "    auth_protocol: SHA\n    auth_password: \"\"\n":         "traps[0].auth_password: must be set",
		v3 + "    auth_protocol: SHA\n    auth_password: 1234567\n":      "traps[0].auth_password: at least 8",
		v3 + "    auth_password: 12345678\n    priv_protocol: AES\n":     "traps[0].priv_password: must be set with priv_protocol AES",
		v3 + "    auth_password: 12345678\n    priv_password: abcdefg\n": "traps[0].priv_password: at least 8",
		v3 + "    priv_protocol: DES\n":                                  "traps[0].priv_password: must be set",
		"traps:\n  - address: 127.0.0.1:162\n    version: v2c\n    community: c\n  - address: 127.0.0.1:163\n" +
			"    version: v3\n    user: u\n    auth_protocol: MD5\n": "traps[1].auth_password",
	} {
		_, err := load(t, yaml)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q:\n got %v\nwant %q", yaml, err, want)
		}
	}
}

// The falling threshold and the cleared notification are read from the
// file and validated by the one rule the engine and the control server use.
func TestHotsetRearmKeys(t *testing.T) {
	item := "hotsets:\n  - name: a\n    stat: Disk/*/busy\n    maxresp: 1\n    threshold: 80\n    frequency: 5m\n    excp_type: trap\n    trap_no: 5\n"
	c, err := load(t, item+"    rearm: 60\n    cleared: true\n")
	if err != nil {
		t.Fatal(err)
	}
	defs, err := hotsetDefs(c)
	if err != nil || len(defs) != 1 || defs[0].Rearm != 60 || !defs[0].Cleared {
		t.Fatalf("rearm 60, cleared: %+v %v", defs, err)
	}
	for yaml, want := range map[string]string{
		item + "    rearm: 90\n":     `hotsets[0]: SiBadArgument (187): hotset "a": rearm: 90 is not from 1 to the threshold 80`,
		item + "    cleared: true\n": `hotsets[0]: SiBadArgument (187): hotset "a": cleared: needs a rearm`,
		item + "    rearm: some\n":   "hotsets[0].rearm",
	} {
		_, err := load(t, yaml)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q:\n got %v\nwant %q", yaml, err, want)
		}
	}
}

// The rate limit's keys reach the engine: a hotset's own, and hotset.*'s
// (the shipped defaults, 10 and 10s) for what it leaves out.
func TestHotsetLimitKeys(t *testing.T) {
	c, err := load(t, "hotset:\n  notify_interval: 30s\nhotsets:\n"+
		"  - {name: a, stat: Disk/*/busy, maxresp: 1, threshold: 5, frequency: 5m, excp_type: trap, trap_no: 1, notify_burst: 3}\n"+
		"  - {name: b, stat: Disk/*/busy, maxresp: 1, threshold: 5, frequency: 5m, excp_type: trap, trap_no: 2}\n")
	if err != nil {
		t.Fatal(err)
	}
	defs, err := hotsetDefs(c)
	if err != nil {
		t.Fatal(err)
	}
	e, err := hotset.New(defs, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.SetLimit(hotsetLimit(c))
	v := e.Views()
	if v[0].Limit != (hotset.Limit{Burst: 3, Every: 30 * time.Second}) || v[1].Limit != (hotset.Limit{Burst: 10, Every: 30 * time.Second}) {
		t.Errorf("limits in force %+v, %+v", v[0].Limit, v[1].Limit)
	}
}
