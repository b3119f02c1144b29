package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/spmi"
)

const base = "1.3.6.1.4.1.32473.1"

// served lists, from `subagent peek --table-oid` and `subagent get`, the
// OIDs of every statistic the daemon has a value for, in both views (its
// scalar and, inside a table row, its cell), and the value of each.
func (e *env) served(t *testing.T) map[string]string {
	t.Helper()
	oidOf, cellOf, paths := e.oids(t)
	// get reads at most spmiwire.MaxPaths statistics at once.
	out := ""
	for len(paths) > 0 {
		n := min(len(paths), spmiwire.MaxPaths)
		o, _, _ := e.run(append(append([]string{"get"}, paths[:n]...), e.args()...)...)
		out, paths = out+o, paths[n:]
	}
	vals := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && oidOf[f[0]] != "" && !strings.HasPrefix(f[1], "SiNoValue") {
			vals[oidOf[f[0]]] = f[1]
			if c := cellOf[f[0]]; c != "" {
				vals[c] = f[1]
			}
		}
	}
	if len(vals) < 100 {
		t.Fatalf("only %d statistics with values", len(vals))
	}
	return vals
}

// oids are the scalar OID and table cell ("" for none) of each statistic
// the daemon serves, by path, from peek --table-oid; and the paths in order.
func (e *env) oids(t *testing.T) (oidOf, cellOf map[string]string, paths []string) {
	t.Helper()
	out, stderr, code := e.run(append([]string{"peek", "--table-oid"}, e.args()...)...)
	if code != 0 {
		t.Fatalf("peek: %s", stderr)
	}
	oidOf, cellOf = map[string]string{}, map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || strings.HasSuffix(f[0], "/") {
			continue
		}
		oidOf[f[0]] = f[2]
		if f[3] != "-" {
			cellOf[f[0]] = f[3]
		}
		paths = append(paths, f[0])
	}
	return oidOf, cellOf, paths
}

func oidsOf(t *testing.T, vars []snmpdtest.Var) []string {
	t.Helper()
	var out []string
	var prev asn1tree.OID
	for i, v := range vars {
		if v.Type == "endOfMibView" {
			// Only at the very end of an agent's whole MIB, as the last line.
			if i != len(vars)-1 {
				t.Fatalf("endOfMibView before the end of the walk at %s", v.OID)
			}
			break
		}
		o, err := asn1tree.Parse(v.OID)
		if err != nil {
			t.Fatalf("walk returned %q: %v", v.OID, err)
		}
		if i > 0 && asn1tree.Compare(prev, o) >= 0 {
			t.Fatalf("walk not strictly increasing: %s then %s", prev, o)
		}
		prev = o
		out = append(out, o.String())
	}
	return out
}

// sameSet compares the walk with what peek and get say is served. Agent
// statistics may appear or change between the two reads and are compared
// by presence only.
func sameSet(t *testing.T, what string, walked []string, served map[string]string) {
	t.Helper()
	got := map[string]bool{}
	labels := 0
	for _, o := range walked {
		if labelCell(t, o) {
			labels++
			continue
		}
		got[o] = true
		if _, ok := served[o]; !ok {
			t.Errorf("%s returned %s, which peek/get do not list with a value", what, o)
		}
	}
	var missing []string
	for o := range served {
		if !got[o] {
			missing = append(missing, o)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%s lacks %d statistics, e.g. %v", what, len(missing), missing[:min(5, len(missing))])
	}
	if labels < 10 {
		t.Errorf("%s returned %d name and description cells of the tables", what, labels)
	}
}

// labelCell reports whether oid is a table's name or description cell:
// base.<200+depth>.<n>.<n fixed arcs>.1.<column 2 or 3>.<index>.
func labelCell(t *testing.T, oid string) bool {
	o := asn1tree.MustParse(oid)
	b := asn1tree.MustParse(base)
	if !o.HasPrefix(b) || len(o) < len(b)+2 || o[len(b)] < spmi.TablesArc || o[len(b)] > spmi.TablesArc+spmi.MaxTableDepth {
		return false
	}
	col := len(b) + 2 + int(o[len(b)+1]) + 1
	if col >= len(o) {
		t.Fatalf("table OID %s too short", oid)
	}
	return o[col] == spmi.ColName || o[col] == spmi.ColDescr
}

func waitServed(t *testing.T, s *snmpdtest.Snmpd, oid string, within time.Duration) time.Duration {
	t.Helper()
	t0 := time.Now()
	for time.Since(t0) < within {
		if v, err := s.Get(oid); err == nil && len(v) == 1 && !strings.HasPrefix(v[0].Type, "noSuch") {
			return time.Since(t0)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s not served within %v", oid, within)
	return 0
}

// startConfigured writes conf to a configuration file and starts the
// daemon with it under snmpd s, waiting until snmpd serves it; it returns
// the file, for a restart.
func startConfigured(t *testing.T, e *env, s *snmpdtest.Snmpd, conf string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "subagent.yaml")
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	e.start("--config", file, "--agentx", s.AgentXAddress)
	waitServed(t, s, idleOID, 10*time.Second)
	return file
}

const idleOID = base + ".1.1.4.0"

func TestAgentXUnderRealSnmpd(t *testing.T) {
	s := snmpdtest.Start(t, snmpdtest.Options{})
	e := newEnv(t)
	e.start("--agentx", s.AgentXAddress)
	waitServed(t, s, idleOID, 10*time.Second)
	served := e.served(t)

	// snmpget of a statistic's full OID returns what `subagent get` reports.
	vars, err := s.Get(idleOID, base+".2.1.3.0", base+".10.1.0")
	if err != nil {
		t.Fatal(err)
	}
	wantTypes := []string{"Counter64", "Gauge32", "Gauge32"}
	for i, v := range vars {
		if v.Type != wantTypes[i] {
			t.Errorf("%s: type %s, want %s", v.OID, v.Type, wantTypes[i])
		}
	}
	if vars[0].Value != served[idleOID] {
		t.Errorf("snmpget CPU/cpu0/idle = %s, subagent get = %s", vars[0].Value, served[idleOID])
	}
	// Mem/Real/%free is a float with two decimals: the wire carries value*100.
	if got, want := vars[1].Value, strings.Replace(fmt.Sprintf("%.2f", atof(served[base+".2.1.3.0"])), ".", "", 1); strings.TrimLeft(got, "0") != strings.TrimLeft(want, "0") {
		t.Errorf("Mem/Real/%%free on the wire %s, want %s (get said %s)", got, want, served[base+".2.1.3.0"])
	}

	for _, walk := range []struct {
		name string
		run  func() ([]snmpdtest.Var, error)
	}{
		{"snmpwalk", func() ([]snmpdtest.Var, error) { return s.Walk(base) }},
		{"snmpbulkwalk", func() ([]snmpdtest.Var, error) { return s.BulkWalk(base, 50) }},
	} {
		v, err := walk.run()
		if err != nil {
			t.Fatalf("%s: %v", walk.name, err)
		}
		sameSet(t, walk.name, oidsOf(t, v), served)
	}

	// Many managers at once get the same, complete answer.
	first := concurrentWalks(t, s)

	// A master that restarts is normal: served again within 5 s.
	s.Restart()
	if d := waitServed(t, s, idleOID, 5*time.Second); d > 5*time.Second {
		t.Fatalf("served again after %v", d)
	}
	if v, err := s.BulkWalk(base, 50); err != nil || hostOIDs(t, v) != hostOIDs(t, first) {
		t.Fatalf("walk after restart: %d varbinds, before it %d (the same outside Agent wanted), %v", len(v), len(first), err)
	}

	// A stopped subagent: the master no longer answers for the subtree.
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	for {
		v, err := s.Get(idleOID)
		if err == nil && len(v) == 1 && strings.HasPrefix(v[0].Type, "noSuch") {
			break
		}
		if time.Since(t0) > 5*time.Second {
			t.Fatalf("master still answers after the subagent stopped: %v %v", v, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestStandaloneResponder(t *testing.T) {
	port := snmpdtest.FreeUDPPort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	e := newEnv(t)
	e.start("--listen", addr, "--community", "perf")
	c := snmpdtest.Target(t, addr, "perf")
	waitServed(t, c, idleOID, 10*time.Second)
	served := e.served(t)
	v, err := c.Get(idleOID)
	if err != nil || v[0].Type != "Counter64" || v[0].Value != served[idleOID] {
		t.Fatalf("snmpget: %v %v, want Counter64 %s", v, err, served[idleOID])
	}
	for _, r := range []int{1, 30} {
		walk, err := c.BulkWalk(base, r)
		if err != nil {
			t.Fatal(err)
		}
		sameSet(t, fmt.Sprintf("snmpbulkwalk -Cr%d", r), oidsOf(t, walk), served)
	}
	walk, err := c.Walk(base)
	if err != nil {
		t.Fatal(err)
	}
	sameSet(t, "snmpwalk", oidsOf(t, walk), served)
	// SNMPv1 managers never see Counter64 (RFC 3584).
	out, _, err := c.Cmd(t.Context(), c.Tools.Snmpwalk, []string{"-v1"}, base)
	if err != nil {
		t.Fatal(err)
	}
	v1, _ := snmpdtest.Parse(out)
	n64 := 0
	for _, x := range v1 {
		if x.Type == "Counter64" {
			t.Fatalf("v1 walk returned Counter64 %s", x.OID)
		}
	}
	for _, x := range walk {
		if x.Type == "Counter64" {
			n64++
		}
	}
	if n := len(oidsOf(t, walk)); len(oidsOf(t, v1)) != n-n64 || n64 == 0 {
		t.Fatalf("v1 walk has %d varbinds; v2c %d of which %d Counter64", len(v1), len(walk), n64)
	}

	concurrentWalks(t, c)

	// A stopped daemon answers nothing: the manager times out.
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(idleOID); err == nil || !strings.Contains(err.Error(), "Timeout") {
		t.Fatalf("snmpget after the daemon stopped: %v, %v; want a timeout", v, err)
	}
}

// concurrentWalks runs 20 bulk walks of the base at once, each with its own
// max-repetitions and bounded by the tools' time limit, and fails unless
// every one returns the same OIDs as a walk made before them. It returns
// that first walk.
func concurrentWalks(t *testing.T, s *snmpdtest.Snmpd) []snmpdtest.Var {
	t.Helper()
	first, err := s.BulkWalk(base, 25)
	if err != nil {
		t.Fatal(err)
	}
	want := hostOIDs(t, first)
	var wg sync.WaitGroup
	errs := make(chan string, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := s.BulkWalk(base, 10+i)
			if err != nil {
				errs <- err.Error()
				return
			}
			if got := hostOIDs(t, v); got != want {
				errs <- fmt.Sprintf("walk %d returned %d varbinds, want %d", i, len(v), len(first))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
	return first
}

// hostOIDs lists a walk's OIDs outside the Agent context (base.12), whose
// statistics come and go with the daemon's front ends; the rest come from
// the fixture and must not change between walks.
func hostOIDs(t *testing.T, vars []snmpdtest.Var) string {
	t.Helper()
	var out []string
	for _, o := range oidsOf(t, vars) {
		if !strings.HasPrefix(o, base+".12.") {
			out = append(out, o)
		}
	}
	return strings.Join(out, " ")
}

func atof(s string) float64 {
	var f float64
	fmt.Sscan(s, &f)
	return f
}
