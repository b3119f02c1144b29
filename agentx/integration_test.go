package agentx

// Integration tests against the real net-snmp snmpd (internal/snmpdtest):
// the subagent registers testBase with a fresh snmpd and the net-snmp
// command-line tools query it through the master.

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/snmpdtest"
)

const tableRows = 200

// servedWithin bounds the wait for the master to serve our subtree: above
// DefaultBackoffMax, the longest a reconnect waits (TestBackoffIsCapped
// checks that exactly), with room for a loaded machine.
const servedWithin = DefaultBackoffMax + 10*time.Second

// integrationTree is the served data: every kind, a numeric-order trap
// (9 < 10 < 100) and a 200-row, three-column table.
func integrationTree(t testing.TB) *asn1tree.Tree[asn1tree.Value] {
	t.Helper()
	e := []asn1tree.Entry[asn1tree.Value]{
		{OID: b("1.0"), Val: asn1tree.Counter(1<<40 + 5)},
		{OID: b("2.0"), Val: asn1tree.Gauge(4000000000)},
		{OID: b("3.0"), Val: asn1tree.Int(-123)},
		{OID: b("4.0"), Val: asn1tree.Str("perfagent subagent")},
		{OID: b("5.0"), Val: asn1tree.Value{Kind: asn1tree.TimeTicks, Num: 4242}},
		{OID: b("6.0"), Val: asn1tree.Value{Kind: asn1tree.Counter32, Num: 77}},
		{OID: b("7.0"), Val: asn1tree.Value{Kind: asn1tree.ObjectIdentifier, OID: asn1tree.MustParse("1.3.6.1.4.1.32473.2")}},
		{OID: b("9.0"), Val: asn1tree.Int(9)},
		{OID: b("10.0"), Val: asn1tree.Int(10)},
		{OID: b("100.0"), Val: asn1tree.Int(100)},
	}
	for i := 1; i <= tableRows; i++ {
		e = append(e,
			asn1tree.Entry[asn1tree.Value]{OID: b(fmt.Sprintf("20.1.2.%d", i)), Val: asn1tree.Int(int32(i))},
			asn1tree.Entry[asn1tree.Value]{OID: b(fmt.Sprintf("20.1.3.%d", i)), Val: asn1tree.Str(fmt.Sprintf("row-%d", i))},
			asn1tree.Entry[asn1tree.Value]{OID: b(fmt.Sprintf("20.1.4.%d", i)), Val: asn1tree.Counter(uint64(i) * 1000)})
	}
	tree, err := asn1tree.Build(e)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// netsnmpTypes is how net-snmp's tools print each kind.
var netsnmpTypes = map[asn1tree.Kind]string{
	asn1tree.Integer32: "INTEGER", asn1tree.Gauge32: "Gauge32", asn1tree.Counter32: "Counter32",
	asn1tree.Counter64: "Counter64", asn1tree.OctetString: "STRING", asn1tree.TimeTicks: "Timeticks",
	asn1tree.ObjectIdentifier: "OID",
}

// expectedVar is what snmpdtest.Parse must return for one entry.
func expectedVar(o asn1tree.OID, v asn1tree.Value) snmpdtest.Var {
	val := strconv.FormatUint(v.Num, 10)
	switch v.Kind {
	case asn1tree.Integer32:
		val = strconv.FormatInt(v.Signed(), 10)
	case asn1tree.OctetString:
		val = v.Str
	case asn1tree.ObjectIdentifier:
		val = v.OID.String()
	}
	return snmpdtest.Var{OID: o.String(), Type: netsnmpTypes[v.Kind], Value: val}
}

func expectedWalk(tree *asn1tree.Tree[asn1tree.Value]) []snmpdtest.Var {
	var want []snmpdtest.Var
	tree.Walk(nil, nil, func(o asn1tree.OID, v asn1tree.Value) bool {
		want = append(want, expectedVar(o, v))
		return true
	})
	return want
}

// checkWalk compares a walk with the expected entries and checks that its
// OIDs strictly increase, numerically.
func checkWalk(t *testing.T, what string, got, want []snmpdtest.Var) {
	t.Helper()
	for i := 1; i < len(got); i++ {
		if asn1tree.Compare(asn1tree.MustParse(got[i-1].OID), asn1tree.MustParse(got[i].OID)) >= 0 {
			t.Errorf("%s: %s does not increase after %s", what, got[i].OID, got[i-1].OID)
			return
		}
	}
	if len(got) != len(want) {
		t.Errorf("%s returned %d entries, want %d", what, len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Errorf("%s entry %d: %v, want %v", what, i, got[i], want[i])
			return
		}
	}
}

// integration is a real snmpd with our subagent attached.
type integration struct {
	snmpd  *snmpdtest.Snmpd
	sa     *Subagent
	tree   *asn1tree.Tree[asn1tree.Value]
	logs   *logBuffer
	cancel context.CancelFunc
	done   chan error
	failed atomic.Int32 // dials that failed
}

// startIntegration starts snmpd and a subagent serving integrationTree
// (or view, when given) and waits until the master serves b("3.0"), which
// cfg must register (testBase when it registers nothing).
func startIntegration(t *testing.T, opts snmpdtest.Options, cfg Config, view func() asn1tree.View) *integration {
	t.Helper()
	return startIntegrationOn(t, snmpdtest.Start(t, opts), cfg, view)
}

// startIntegrationOn is startIntegration with a running snmpd.
func startIntegrationOn(t *testing.T, s *snmpdtest.Snmpd, cfg Config, view func() asn1tree.View) *integration {
	t.Helper()
	in := &integration{snmpd: s, tree: integrationTree(t), logs: &logBuffer{}, done: make(chan error, 1)}
	if view == nil {
		view = func() asn1tree.View { return in.tree }
	}
	if cfg.Address == "" {
		cfg.Address = s.AgentXAddress
	}
	cfg.ID, cfg.Description = asn1tree.MustParse("1.3.6.1.4.1.32473.99"), "perfagent integration test"
	if cfg.Subtrees == nil && cfg.Registrations == nil {
		cfg.Subtrees = testSubtrees
	}
	cfg.Logger = slog.New(slog.NewTextHandler(in.logs, nil))
	sa, err := New(cfg, view)
	if err != nil {
		t.Fatal(err)
	}
	dial := sa.dial
	sa.dial = func(ctx context.Context, network, address string) (net.Conn, error) {
		c, err := dial(ctx, network, address)
		if err != nil {
			in.failed.Add(1)
		}
		return c, err
	}
	in.sa = sa
	baseline := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	in.cancel = cancel
	go func() { in.done <- sa.Run(ctx) }()
	t.Cleanup(func() {
		in.stop(t)
		checkGoroutines(t, baseline)
		if t.Failed() {
			t.Logf("subagent log:\n%s\nsnmpd log:\n%s", in.logs, s.Log())
		}
	})
	in.waitServed(t, servedWithin)
	return in
}

// stop cancels Run and waits for it, bounded.
func (in *integration) stop(t *testing.T) {
	t.Helper()
	in.cancel()
	select {
	case err := <-in.done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		in.done <- nil // later stops return at once
	case <-time.After(ioTimeout):
		t.Fatalf("Run did not return within %v", ioTimeout)
	}
}

// waitServed polls snmpget until the master answers for our subtree and
// returns how long that took.
func (in *integration) waitServed(t *testing.T, bound time.Duration) time.Duration {
	t.Helper()
	begin := time.Now()
	var last string
	served := false
	defer func() {
		if !served {
			t.Logf("last snmpget: %s", last)
		}
	}()
	testutil.Eventually(t, "the master to serve "+b("3.0").String(), bound, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		out, _, err := in.snmpd.Cmd(ctx, in.snmpd.Tools.Snmpget, []string{"-t", "0.3", "-r", "0"}, b("3.0").String())
		vars, perr := snmpdtest.Parse(out)
		last = fmt.Sprintf("%q %v %v", out, err, perr)
		return err == nil && perr == nil && len(vars) == 1 && vars[0].Type == "INTEGER"
	})
	served = true
	return time.Since(begin)
}

func TestIntegrationGetTypes(t *testing.T) {
	in := startIntegration(t, snmpdtest.Options{}, Config{}, nil)
	oids := []string{b("1.0").String(), b("2.0").String(), b("3.0").String(), b("4.0").String(),
		b("5.0").String(), b("6.0").String(), b("7.0").String(), b("20.1.4.7").String()}
	got, err := in.snmpd.Get(oids...)
	if err != nil {
		t.Fatal(err)
	}
	var want []snmpdtest.Var
	for _, o := range oids {
		v, _ := in.tree.Get(asn1tree.MustParse(o))
		want = append(want, expectedVar(asn1tree.MustParse(o), v))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("snmpget:\n%v\nwant\n%v", got, want)
	}
	// Counter64, Gauge32, Integer32 and STRING as the brief names them.
	for i, typ := range map[int]string{0: "Counter64", 1: "Gauge32", 2: "INTEGER", 3: "STRING"} {
		if got[i].Type != typ {
			t.Errorf("%s is %s, want %s", got[i].OID, got[i].Type, typ)
		}
	}
	missing, err := in.snmpd.Get(b("20.1.2.999").String(), b("50.0").String())
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) != 2 || missing[0].Type != "noSuchInstance" || missing[1].Type != "noSuchObject" {
		t.Errorf("missing entries: %v", missing)
	}
}

func TestIntegrationWalks(t *testing.T) {
	in := startIntegration(t, snmpdtest.Options{}, Config{}, nil)
	want := expectedWalk(in.tree)
	got, err := in.snmpd.Walk(testBase)
	if err != nil {
		t.Fatal(err)
	}
	checkWalk(t, "snmpwalk", got, want)
	for _, reps := range []int{1, 10, 50} {
		got, err := in.snmpd.BulkWalk(testBase, reps)
		if err != nil {
			t.Fatal(err)
		}
		checkWalk(t, fmt.Sprintf("snmpbulkwalk -Cr%d", reps), got, want)
	}
	// A walk of a column starts inside our region and ends at its edge.
	col, err := in.snmpd.BulkWalk(b("20.1.3").String(), 25)
	if err != nil {
		t.Fatal(err)
	}
	if len(col) != tableRows || col[0].Value != "row-1" || col[tableRows-1].Value != fmt.Sprintf("row-%d", tableRows) {
		t.Errorf("column walk: %d entries, first %v", len(col), col[0])
	}
	// GetNext from before our subtree lands on our first entry.
	next, err := in.snmpd.GetNext("1.3.6.1.4.1.32473.0")
	if err != nil || len(next) != 1 || next[0].OID != b("1.0").String() {
		t.Errorf("getnext before the subtree: %v %v", next, err)
	}
}

func TestIntegrationSetIsRefused(t *testing.T) {
	in := startIntegration(t, snmpdtest.Options{RWCommunity: "private"}, Config{}, nil)
	_, err := in.snmpd.Set(b("3.0").String(), "i", "5")
	if err == nil || !strings.Contains(err.Error(), "notWritable") {
		t.Fatalf("snmpset: %v, want a notWritable error", err)
	}
	// The session survives the set and the value is unchanged.
	got, err := in.snmpd.Get(b("3.0").String())
	if err != nil || len(got) != 1 || got[0].Value != "-123" {
		t.Errorf("after the refused set: %v %v", got, err)
	}
}

// One SNMP request sees one View even when the master needs several
// AgentX passes for it: every 50-row bulk answer comes from one generation.
func TestIntegrationOneViewPerRequest(t *testing.T) {
	base := integrationTree(t)
	gen := 0
	view := func() asn1tree.View {
		gen++ // called on the session's reader goroutine only
		var e []asn1tree.Entry[asn1tree.Value]
		base.Walk(nil, nil, func(o asn1tree.OID, _ asn1tree.Value) bool {
			e = append(e, asn1tree.Entry[asn1tree.Value]{OID: o, Val: asn1tree.Int(int32(gen))})
			return true
		})
		tree, _ := asn1tree.Build(e)
		return tree
	}
	in := startIntegration(t, snmpdtest.Options{}, Config{}, view)
	got, err := in.snmpd.BulkWalk(testBase, 50)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != base.Len() {
		t.Fatalf("%d entries, want %d", len(got), base.Len())
	}
	seen := map[string]bool{}
	for i := 0; i < len(got); i += 50 {
		for j := i; j < min(i+50, len(got)); j++ {
			if got[j].Value != got[i].Value {
				t.Fatalf("one bulk answer mixes views: entry %d is generation %s, entry %d generation %s", i, got[i].Value, j, got[j].Value)
			}
		}
		if seen[got[i].Value] {
			t.Errorf("generation %s served two SNMP requests", got[i].Value)
		}
		seen[got[i].Value] = true
	}
}
