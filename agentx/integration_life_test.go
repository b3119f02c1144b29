package agentx

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/snmpdtest"
)

// A restarted master forgets every session; the subtree is served again
// once the master is back, with default backoff, also after the backoff
// grew with failed dials while the master was away.
func TestIntegrationMasterRestart(t *testing.T) {
	in := startIntegration(t, snmpdtest.Options{}, Config{PingInterval: time.Second}, nil)
	for round := 0; round < 3; round++ {
		failed := in.failed.Load()
		in.snmpd.Stop()
		waitFor(t, "the subagent to notice", func() bool { return !in.sa.Connected() })
		// Let the backoff grow by a failed dial more each round (it is
		// not reset between rounds: no session lives BackoffMax).
		want := failed + int32(round)
		testutil.Eventually(t, fmt.Sprintf("%d failed dials", round), servedWithin, func() bool { return in.failed.Load() >= want })
		in.snmpd.Restart()
		took := in.waitServed(t, servedWithin)
		t.Logf("round %d: served again %v after the master was back", round, took.Round(time.Millisecond))
		got, err := in.snmpd.BulkWalk(testBase, 20)
		if err != nil {
			t.Fatal(err)
		}
		checkWalk(t, "bulk walk after restart", got, expectedWalk(in.tree))
	}
	if n := in.logs.count("session lost"); n != 3 {
		t.Errorf("%d 'session lost' lines for 3 restarts:\n%s", n, in.logs)
	}
}

// Stopping the subagent unregisters it: the master stops answering for the
// subtree at once, and keeps running.
func TestIntegrationSubagentStop(t *testing.T) {
	in := startIntegration(t, snmpdtest.Options{}, Config{}, nil)
	in.stop(t)
	got, err := in.snmpd.Get(b("3.0").String(), "1.3.6.1.2.1.1.3.0")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Type != "noSuchObject" || got[1].Type != "Timeticks" {
		t.Errorf("after the subagent stopped: %v", got)
	}
	walk, err := in.snmpd.Walk(testBase)
	if err != nil || len(walk) != 1 || walk[0].Type != "noSuchObject" {
		t.Errorf("walk after the subagent stopped: %v %v", walk, err)
	}
}

func TestIntegrationConcurrentBulkWalks(t *testing.T) {
	in := startIntegration(t, snmpdtest.Options{}, Config{}, nil)
	want := expectedWalk(in.tree)
	const walkers = 20
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	results := make([][]snmpdtest.Var, walkers)
	errs := make([]error, walkers)
	begin := time.Now()
	for i := range walkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, _, err := in.snmpd.Cmd(ctx, in.snmpd.Tools.Snmpbulkwalk, []string{"-Cr" + fmt.Sprint(5+i)}, testBase)
			if err == nil {
				results[i], err = snmpdtest.Parse(out)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	t.Logf("%d concurrent bulk walks of %d entries took %v", walkers, len(want), time.Since(begin).Round(time.Millisecond))
	for i := range walkers {
		if errs[i] != nil {
			t.Errorf("walker %d: %v", i, errs[i])
			continue
		}
		checkWalk(t, fmt.Sprintf("walker %d", i), results[i], want)
	}
}

// The subagent over the master's TCP AgentX socket.
func TestIntegrationTCP(t *testing.T) {
	s := snmpdtest.Start(t, snmpdtest.Options{AgentXTCP: true})
	in := startIntegrationOn(t, s, Config{Address: s.AgentXTCPAddress}, nil)
	got, err := s.BulkWalk(testBase, 30)
	if err != nil {
		t.Fatal(err)
	}
	checkWalk(t, "bulk walk over TCP", got, expectedWalk(in.tree))
}

func TestIntegrationNotify(t *testing.T) {
	trapd := snmpdtest.StartTrapd(t)
	in := startIntegration(t, snmpdtest.Options{TrapSink: trapd.Addr}, Config{}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	trapOID := asn1tree.MustParse("1.3.6.1.4.1.32473.2.0.1")
	err := in.sa.Notify(ctx, []VarBind{
		{OID: SnmpTrapOID0, Value: asn1tree.Value{Kind: asn1tree.ObjectIdentifier, OID: trapOID}},
		{OID: b("4.0"), Value: asn1tree.Str("hotset crossed")},
		{OID: b("1.0"), Value: asn1tree.Counter(1 << 40)},
	})
	if err != nil {
		t.Fatalf("Notify: %v", err)
	}
	log, err := trapd.WaitFor(10*time.Second, "OID: ."+trapOID.String())
	if err != nil {
		t.Fatalf("%v\nsnmptrapd log:\n%s", err, log)
	}
	for _, want := range []string{
		"." + SysUpTime0.String() + " = Timeticks:", // added by the master
		"." + b("4.0").String() + ` = STRING: "hotset crossed"`,
		"." + b("1.0").String() + " = Counter64: 1099511627776",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("trap lacks %q:\n%s", want, log)
		}
	}
	// A layout the master would refuse never leaves the subagent.
	if err := in.sa.Notify(ctx, []VarBind{{OID: b("4.0"), Value: asn1tree.Str("x")}}); err == nil {
		t.Error("Notify without snmpTrapOID.0 was sent")
	}
}

// AgentCaps put us in the master's sysORTable, again after a master
// restart, and are gone once the subagent stops.
func TestIntegrationSysORTable(t *testing.T) {
	capID := asn1tree.MustParse("1.3.6.1.4.1.32473.99.1")
	cfg := Config{Capabilities: []Capability{{ID: capID, Description: "perfagent test capabilities"}}}
	in := startIntegration(t, snmpdtest.Options{}, cfg, nil)
	const sysORID, sysORDescr = "1.3.6.1.2.1.1.9.1.2", "1.3.6.1.2.1.1.9.1.3"
	listed := func() (bool, bool) {
		t.Helper()
		ids, err := in.snmpd.Walk(sysORID)
		if err != nil {
			t.Fatal(err)
		}
		descrs, err := in.snmpd.Walk(sysORDescr)
		if err != nil {
			t.Fatal(err)
		}
		var id, descr bool
		for _, v := range ids {
			id = id || v.Type == "OID" && v.Value == capID.String()
		}
		for _, v := range descrs {
			descr = descr || v.Value == "perfagent test capabilities"
		}
		return id, descr
	}
	if id, descr := listed(); !id || !descr {
		t.Fatalf("sysORTable lists our ID %v, our description %v", id, descr)
	}
	in.snmpd.Restart()
	in.waitServed(t, servedWithin)
	if id, descr := listed(); !id || !descr {
		t.Errorf("after a master restart, sysORTable lists our ID %v, our description %v", id, descr)
	}
	in.stop(t)
	if id, descr := listed(); id || descr {
		t.Errorf("after the subagent stopped, sysORTable still lists our ID %v, description %v", id, descr)
	}
}
