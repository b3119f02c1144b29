package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/snmpdtest"
)

// A GET of a process started after Proc's last reading is answered with
// its value, not noSuchInstance, once that reading is older than
// min_age: the GET waits for Proc's reading as for the other contexts'.
// Proc is read apart and, never asked for before, not kept fresh in the
// background: without the wait it would be found at the next
// refresh.interval (30 s). Through the standalone responder and through
// snmpd, each on a daemon of its own (the first GET makes Proc warm).
func TestGetOfANewProcessFindsIt(t *testing.T) {
	s := snmpdtest.Start(t, snmpdtest.Options{})
	for i, frontend := range []string{"standalone", "snmpd"} {
		addr := fmt.Sprintf("127.0.0.1:%d", snmpdtest.FreeUDPPort(t))
		e := newEnv(t)
		proc := filepath.Join(t.TempDir(), "proc")
		testutil.CopyTree(t, e.proc, proc)
		e.proc = proc
		e.start("--agentx", s.AgentXAddress, "--listen", addr)
		waitServed(t, s, idleOID, 10*time.Second) // CPU: Proc is not asked for
		c := s
		if frontend == "standalone" {
			c = snmpdtest.Target(t, addr, "public")
		}
		pid := 5555 + i
		testutil.CopyTree(t, filepath.Join(proc, "1187"), filepath.Join(proc, fmt.Sprint(pid)))
		time.Sleep(1500 * time.Millisecond) // Proc's reading is older than min_age (1 s)
		// Proc(10)/pid(100)/<pid>/name(1), a scalar.
		oid := fmt.Sprintf("%s.10.100.%d.1.0", base, pid)
		start := time.Now()
		v, err := c.Get(oid)
		took := time.Since(start)
		if err != nil || len(v) != 1 || strings.Contains(strings.ToLower(v[0].Type+v[0].Value), "nosuch") {
			t.Errorf("%s: GET of new pid %d: %v %v after %v, want its name", frontend, pid, v, err, took)
		} else {
			t.Logf("%s: GET of a new pid answered in %v: %v", frontend, took, v[0])
		}
		e.stop()
	}
}
