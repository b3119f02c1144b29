package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/perfagent/subagent/internal/snmpdtest"
)

// A Get of a cell an existing row has no value in (lo has no link speed)
// is noSuchInstance (RFC 3416 4.2.1: the object exists, that instance
// does not), as is a row that does not exist; a name under no object the
// module declares is noSuchObject. The same through snmpd and from the
// standalone responder.
func TestMissingCellsAreNoSuchInstance(t *testing.T) {
	s := snmpdtest.Start(t, snmpdtest.Options{})
	addr := fmt.Sprintf("127.0.0.1:%d", snmpdtest.FreeUDPPort(t))
	e := newEnv(t)
	e.start("--agentx", s.AgentXAddress, "--listen", addr)
	lanSpeed := base + ".200.1.5.1.22" // the fixture's lo is 1, eth0 2
	waitServed(t, s, lanSpeed+".2", 10*time.Second)
	cases := []struct{ oid, want string }{
		{lanSpeed + ".2", "Gauge32"},               // eth0 has a speed
		{lanSpeed + ".1", "noSuchInstance"},        // lo has none
		{lanSpeed + ".99", "noSuchInstance"},       // no such row
		{base + ".5.1.12.0", "noSuchInstance"},     // lo's speed in the scalar view
		{base + ".200.1.5.1.99.1", "noSuchObject"}, // no such column
		{base + ".5.77.1.0", "noSuchObject"},       // no such context
	}
	for name, m := range map[string]*snmpdtest.Snmpd{"snmpd": s, "standalone": snmpdtest.Target(t, addr, "public")} {
		for _, c := range cases {
			got, err := m.Get(c.oid)
			if err != nil || len(got) != 1 {
				t.Fatalf("%s: snmpget %s: %v %v", name, c.oid, got, err)
			}
			if got[0].Type != c.want {
				t.Errorf("%s: snmpget %s: %s %s, want %s", name, c.oid, got[0].Type, got[0].Value, c.want)
			}
		}
	}
}
