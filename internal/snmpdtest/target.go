package snmpdtest

import (
	"os"
	"path/filepath"
	"testing"
)

// Target returns a client for any SNMP agent at addr ("127.0.0.1:port"),
// such as the subagent's standalone responder, with the same tool helpers
// (Get, Walk, BulkWalk, Cmd) as a started Snmpd. Stop does nothing on it.
func Target(t testing.TB, addr, community string) *Snmpd {
	t.Helper()
	dir := shortTempDir(t)
	s := &Snmpd{Tools: FindTools(t), Dir: dir, Addr: addr, Community: community, t: t, stopped: true}
	if err := mkdirs(s.stateDir()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.stateDir(), "snmp.conf"), []byte("clientaddr 127.0.0.1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return s
}

// FreeUDPPort returns a 127.0.0.1 UDP port that was free a moment ago.
func FreeUDPPort(t testing.TB) int {
	t.Helper()
	p, err := freeUDPPort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}
