package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/mib/mibtest"
)

// commOf is the command name in a /proc/<pid>/stat line.
func commOf(stat string) string {
	open, end := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return ""
	}
	return stat[open+1 : end]
}

// churn keeps about live processes of its own in the /proc at proc,
// starting one and ending the oldest every few milliseconds, each a copy
// of the fixture's process 2210 under a new PID named w<PID>. A process
// appears and vanishes whole: its directory is made beside /proc and
// renamed in, and renamed out before it is removed.
type churn struct {
	proc, stage string
	template    string
	mu          sync.Mutex
	pids        []int // live, oldest first
	next        int
	changes     int
}

func newChurn(t *testing.T, proc string) *churn {
	t.Helper()
	tmpl, err := os.ReadFile(filepath.Join(proc, "2210", "stat"))
	if err != nil {
		t.Fatal(err)
	}
	stage := filepath.Join(filepath.Dir(proc), "stage")
	if err := os.Mkdir(stage, 0o755); err != nil {
		t.Fatal(err)
	}
	return &churn{proc: proc, stage: stage, template: string(tmpl), next: 10000}
}

func (c *churn) start(pid int) error {
	dir := filepath.Join(c.stage, strconv.Itoa(pid))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	stat := fmt.Sprintf("%d (w%d)%s", pid, pid, c.template[strings.LastIndexByte(c.template, ')')+1:])
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
		return err
	}
	return os.Rename(dir, filepath.Join(c.proc, strconv.Itoa(pid)))
}

func (c *churn) end(pid int) error {
	gone := filepath.Join(c.stage, "gone-"+strconv.Itoa(pid))
	if err := os.Rename(filepath.Join(c.proc, strconv.Itoa(pid)), gone); err != nil {
		return err
	}
	return os.RemoveAll(gone)
}

// step starts a process and, beyond live, ends the oldest.
func (c *churn) step(live int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	pid := c.next
	c.next++
	if err := c.start(pid); err != nil {
		return err
	}
	c.pids = append(c.pids, pid)
	if len(c.pids) > live {
		if err := c.end(c.pids[0]); err != nil {
			return err
		}
		c.pids = c.pids[1:]
	}
	c.changes++
	return nil
}

func (c *churn) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changes
}

// procColumns are procPidTable's columns; each process of the fixture and
// of the churn has a value in every one.
var procColumns = []string{"procPidName", "procPidState", "procPidUsercpu",
	"procPidSyscpu", "procPidRss", "procPidThreads", "procPidPpid", "procPidVsize"}

// holes lists what is wrong with the rows of one read of procPidTable: a
// row with a cell missing, or whose cells belong to different processes.
func holes(rows map[string]map[string]string, comm map[string]string) []string {
	var bad []string
	for idx, r := range rows {
		var missing []string
		for _, c := range procColumns {
			if v := r[c]; v == "" || v == "?" {
				missing = append(missing, c)
			}
		}
		want := comm[idx]
		if want == "" {
			want = "w" + idx
		}
		switch {
		case len(missing) > 0:
			bad = append(bad, fmt.Sprintf("row %s lacks %v: %v", idx, missing, r))
		case r["procPidName"] != want:
			bad = append(bad, fmt.Sprintf("row %s mixes processes (name %s of %s): %v", idx, want, idx, r))
		}
	}
	return bad
}

// A walk is answered from one snapshot: snmptable reads procPidTable
// column after column in many GetBulk requests while processes come and
// go and the snapshot is renewed every 100 ms, yet no row has a hole,
// through the standalone responder and through snmpd.
func TestTableWalkIsConsistentDuringChurn(t *testing.T) {
	mibtest.Require(t, "snmptable")
	s := snmpdtest.Start(t, snmpdtest.Options{})
	addr := fmt.Sprintf("127.0.0.1:%d", snmpdtest.FreeUDPPort(t))
	e := newEnv(t)
	root := t.TempDir()
	proc := filepath.Join(root, "proc")
	testutil.CopyTree(t, e.proc, proc)
	comm := map[string]string{}
	entries, err := os.ReadDir(proc)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range entries {
		if _, err := strconv.Atoi(d.Name()); err == nil && d.Type().IsDir() {
			b, err := os.ReadFile(filepath.Join(proc, d.Name(), "stat"))
			if err != nil {
				t.Fatal(err)
			}
			comm[d.Name()] = commOf(string(b))
		}
	}
	e.proc = proc
	ch := newChurn(t, proc)
	const live = 150
	for range live {
		if err := ch.step(live); err != nil {
			t.Fatal(err)
		}
	}
	conf := filepath.Join(root, "c.yaml")
	if err := os.WriteFile(conf, []byte("refresh:\n  min_age: 100ms\n  apart: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.start("--agentx", s.AgentXAddress, "--listen", addr, "--config", conf)
	waitServed(t, s, idleOID, 10*time.Second)

	ctx, cancel := context.WithCancel(context.Background())
	churned := make(chan error, 1)
	go func() {
		for ctx.Err() == nil {
			if err := ch.step(live); err != nil {
				churned <- err
				return
			}
			time.Sleep(2 * time.Millisecond) // a pace, not a wait for anything
		}
		churned <- nil
	}()
	defer func() {
		cancel()
		if err := <-churned; err != nil {
			t.Errorf("churn: %v", err)
		}
	}()

	for _, target := range []struct{ name, addr, community string }{
		{"standalone", "udp:" + addr, "public"}, {"snmpd", "udp:" + s.Addr, s.Community},
	} {
		sets := map[string]bool{}
		before := ch.count()
		for i := range 10 {
			rows := snmptable(t, target.addr, target.community, "procPidTable")
			if len(rows) < len(comm) {
				t.Errorf("%s read %d: %d rows, fewer than the fixture's %d processes", target.name, i+1, len(rows), len(comm))
			}
			if h := holes(rows, comm); len(h) > 0 {
				slices.Sort(h)
				t.Errorf("%s read %d: %d rows with holes of %d, such as\n%s", target.name, i+1, len(h), len(rows),
					strings.Join(h[:min(len(h), 3)], "\n"))
			}
			sets[strings.Join(slices.Sorted(maps.Keys(rows)), ",")] = true
		}
		// The table did change meanwhile: the reads saw different rows.
		if len(sets) < 2 {
			t.Errorf("%s: all 10 reads saw the same rows (%d process changes): the test did not churn", target.name, ch.count()-before)
		}
	}
	// Both front ends tell how old the data of their answers was.
	out, stderr, code := e.run(append([]string{"get", "Agent/snmp/dataage", "Agent/snmp/maxdataage",
		"Agent/agentx/dataage", "Agent/agentx/maxdataage"}, e.args()...)...)
	if code != 0 || len(strings.Split(strings.TrimSpace(out), "\n")) != 4 {
		t.Errorf("get the data ages: exit %d\n%s%s", code, out, stderr)
	}
}
