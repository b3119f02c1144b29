package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stateEngineID is the engine ID (hex) in the daemon's state directory:
// snmpEngineID.0, which its v3 traps are sent from.
func stateEngineID(t *testing.T, e *env) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.state, "snmp-engine"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if id, ok := strings.CutPrefix(l, "engine_id "); ok {
			return id
		}
	}
	t.Fatalf("no engine_id in the state file:\n%s", b)
	return ""
}
