package config

import (
	"strings"
	"testing"
)

// The hotsets' keys and types and the hotset settings' ranges are checked
// here; the hotsets and trap destinations themselves by their packages
// (daemon/settings_test.go).
func TestHotsetErrorsNameTheKey(t *testing.T) {
	item := "hotsets:\n  - name: a\n    stat: Disk/*/busy\n    feed_type: threshold\n    excp_type: none\n"
	if _, err := load(t, item); err != nil {
		t.Fatalf("a valid hotset: %v", err)
	}
	for yaml, want := range map[string]string{
		item + "    colour: red\n":                  "unknown key hotsets[0].colour",
		item + "    frequency: 5\n":                 "hotsets[0].frequency: 5 is not a duration",
		item + "    maxresp: many\n":                "hotsets[0].maxresp: \"many\" is not a whole number",
		"hotsets:\n  - just a name\n":               "hotsets[0]: \"just a name\" is not a section",
		"hotset:\n  interval: 0s\n":                 "hotset.interval: 0s is not from 1s to 1h",
		"hotset:\n  tree_changed_interval: 500ms\n": "hotset.tree_changed_interval: 500ms is not from 1s to 24h",
		"hotset:\n  notify_burst: 0\n":              "hotset.notify_burst: 0 is not from 1 to 10000",
		"hotset:\n  notify_interval: 100ms\n":       "hotset.notify_interval: 100ms is not from 1s to 24h",
		item + "    notify_burst: 20000\n":          "hotsets[0].notify_burst: 20000 is not from 1 to 10000 (0: hotset's)",
		item + "    notify_interval: 48h\n":         "hotsets[0].notify_interval: 48h0m0s is not from 1s to 24h (0: hotset's)",
		"traps:\n  - address: 127.0.0.1:162\n    version: v2c\n    community: c\n    inform: maybe\n": "traps[0].inform",
		"traps:\n  - {address: 127.0.0.1:162, version: v3, user: u, engine_id: 80007ed904}\n":         "traps[0].engine_id: no longer set per destination: v3 traps now use the agent's snmpEngineID.0",
	} {
		_, err := load(t, yaml)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q:\n got %v\nwant %q", yaml, err, want)
		}
	}
}
