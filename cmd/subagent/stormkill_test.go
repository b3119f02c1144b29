package main

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	client "github.com/perfagent/subagent/client/ddsclient"
	"github.com/perfagent/subagent/notiflog"
)

// stormKillYAML: every new DDS/Storm peer set raises a notification (a
// limit wide enough to let all through), logged (the log keeps
// logEntries) and sent to trapd.
func stormKillYAML(trapd string, logEntries int) string {
	return `hotset:
  interval: 1s
  tree_changed_interval: 0
  log_entries: ` + strconv.Itoa(logEntries) + `
  notify_burst: 10000
  notify_interval: 1s
hotsets:
  - {name: storm, stat: DDS/Storm/*/load, maxresp: 1, threshold: 50, frequency: 5m, feed_type: threshold,
     excp_type: trap, trap_no: 5}
traps:
  - {address: ` + trapd + `, version: v2c, community: public}
`
}

// peerSets registers a new supplier with per new peer sets
// (DDS/Storm/k<n>/p, load 90) every 50 ms, each leaving after 2 s,
// whether the daemon is up or not, until stop.
func peerSets(t *testing.T, e *env, stop <-chan struct{}, per int) {
	dir := t.TempDir()
	var alive []*client.Supplier
	defer func() {
		for _, s := range alive {
			s.Exit()
		}
	}()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for k := 1; ; k++ {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		if len(alive) >= 40 {
			alive[0].Exit()
			alive = alive[1:]
		}
		v := client.NewVendor("Storm", "Peer names that keep coming", 7)
		var gs []*client.Gauge
		for j := range per {
			n := k*per + j
			gs = append(gs, v.Context(fmt.Sprintf("k%d", n), "A new peer set", uint32(n)).Context("p", "Its peer", 1).Gauge("load", "Load", 1, client.Range(0, 100)))
		}
		s, err := client.Start(v, filepath.Join(dir, fmt.Sprintf("k%d.shm", k)), &client.Options{Socket: filepath.Join(e.runDir, "dds.sock")})
		if err != nil {
			continue // the daemon is down
		}
		s.Update(func() {
			for _, g := range gs {
				g.Set(90)
			}
		})
		alive = append(alive, s)
	}
}

// trapSink is a receiver on loopback that takes every trap until the
// test ends; it returns its address.
func trapSink(t *testing.T) string {
	trapd, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { trapd.Close() })
	go func() {
		buf := make([]byte, 65536)
		for {
			if _, _, err := trapd.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	return trapd.LocalAddr().String()
}

// journalEntries reads a copy of the daemon's journal (the daemon is
// dead), as the next start will: the entries that survived.
func journalEntries(t *testing.T, state string) []notiflog.Entry {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(state, notiflog.File))
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), notiflog.File)
	if err := os.WriteFile(cp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := notiflog.Open(cp, 10000, 0, nil, nil)
	if err != nil {
		t.Fatalf("the journal left by kill -9 does not open: %v", err)
	}
	defer l.Close()
	return l.View().Entries
}

// The kill -9 target: a daemon killed (SIGKILL) in a storm of
// notifications, each logged and sent, N times (STORM_KILLS,
// default 8; 30 by hand; not SUBAGENT_*, which the daemon would read as
// configuration) at moments spread over the group commit's
// batches. Every restart succeeds and logs no error (the torn-tail and
// unclean-stop warnings are the ones expected); the journal opens; every
// entry that survived one kill survives all later ones unchanged, in
// index order, each a storm notification with its VarBinds; the index
// a start goes on from is never below one handed out before the kill
// (NotifLog/next); no temporary file is left in the state directory.
func TestKillDuringNotificationStorm(t *testing.T) {
	kills := 8
	if s := os.Getenv("STORM_KILLS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("STORM_KILLS=%q: want a positive count", s)
		}
		kills = n
	}
	trapd := trapSink(t)
	e := newEnv(t)
	file := filepath.Join(t.TempDir(), "subagent.yaml")
	if err := os.WriteFile(file, []byte(stormKillYAML(trapd, 10000)), 0o600); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); peerSets(t, e, stop, 1) }()
	defer func() { close(stop); wg.Wait() }()

	base := "1.3.6.1.4.1.32473.1"
	durable := map[uint32]notiflog.Entry{} // survived a kill
	var lastDurable uint32
	maxLost, torn := 0, 0
	start := time.Now()
	e.start("--config", file)
	for round := 1; round <= kills; round++ {
		deadline := time.Now().Add(20 * time.Second)
		for n, _ := strconv.Atoi(getValue(t, e, "NotifLog/logged")); n < 3; n, _ = strconv.Atoi(getValue(t, e, "NotifLog/logged")) {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: no notifications logged within 20s\n%s", round, e.daemonLog)
			}
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(time.Duration(rand.IntN(1000)) * time.Millisecond) // anywhere in the second's batches
		next, err := strconv.ParseUint(getValue(t, e, "NotifLog/next"), 10, 32)
		if err != nil {
			t.Fatalf("round %d: NotifLog/next: %v", round, err)
		}
		e.daemon.Process.Kill()
		<-e.daemonExited
		e.stopped = true

		ents := journalEntries(t, e.state)
		seen := map[uint32]bool{}
		for i, en := range ents {
			if i > 0 && en.Index <= ents[i-1].Index {
				t.Fatalf("round %d: entry %d follows %d", round, en.Index, ents[i-1].Index)
			}
			if en.OID.String() != base+".0.5" || len(en.Vars) < 9 || en.Vars[0].Value().Str != "storm" ||
				!strings.HasPrefix(en.Vars[1].Value().Str, "DDS/Storm/k") {
				t.Fatalf("round %d: entry %d is not a storm notification: %s %+v", round, en.Index, en.OID, en.Vars)
			}
			if old, ok := durable[en.Index]; ok && (!reflect.DeepEqual(old.Vars, en.Vars) || !old.OID.Equal(en.OID) || !old.Time.Equal(en.Time)) {
				t.Fatalf("round %d: entry %d changed across a kill: %+v, was %+v", round, en.Index, en, old)
			}
			seen[en.Index] = true
		}
		for idx := range durable {
			if !seen[idx] {
				t.Fatalf("round %d: entry %d, kept through an earlier kill, is gone (%d entries now)", round, idx, len(ents))
			}
		}
		for _, en := range ents {
			durable[en.Index] = en
		}
		if n := len(ents); n > 0 {
			if ents[n-1].Index < lastDurable {
				t.Fatalf("round %d: the last entry kept is %d, below %d kept before", round, ents[n-1].Index, lastDurable)
			}
			lastDurable = ents[n-1].Index
			maxLost = max(maxLost, int(next)-1-int(lastDurable))
		}

		e.start("--config", file)
		if got, err := strconv.ParseUint(getValue(t, e, "NotifLog/next"), 10, 32); err != nil || got < next {
			t.Fatalf("round %d: NotifLog/next %d (%v) after the restart, below %d handed out before the kill", round, got, err, next)
		}
		log := e.daemonLog.String()
		for _, line := range strings.Split(log, "\n") {
			if strings.Contains(line, "level=ERROR") ||
				strings.Contains(line, "notification log") && strings.Contains(line, "level=WARN") &&
					!strings.Contains(line, "dropped a torn or corrupt tail") && !strings.Contains(line, "did not stop cleanly") {
				t.Errorf("round %d: the restart logged %s", round, line)
			}
		}
		if strings.Contains(log, "dropped a torn or corrupt tail") {
			torn++
		}
		des, err := os.ReadDir(e.state)
		if err != nil {
			t.Fatal(err)
		}
		for _, de := range des {
			if strings.Contains(de.Name(), ".tmp") {
				t.Errorf("round %d: temporary file %s left in the state directory after the restart", round, de.Name())
			}
		}
	}
	t.Logf("%d kills in %v: %d entries kept through them, last %d; up to %d handed out before a kill were lost with its batch; %d restarts cut a torn tail",
		kills, time.Since(start).Round(time.Millisecond), len(durable), lastDurable, maxLost, torn)
	if len(durable) == 0 {
		t.Errorf("no entry survived any kill")
	}
}
