package responder

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

// startResponder runs a responder on cfg.Listen (default 127.0.0.1:0)
// until the test ends, and returns it with its address for net-snmp.
func startResponder(t *testing.T, cfg Config) (*Responder, string) {
	t.Helper()
	return runResponder(t, newTestResponder(t, cfg))
}

// runResponder runs r until the test ends, as startResponder.
func runResponder(t *testing.T, r *Responder) (*Responder, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	select {
	case <-r.Ready():
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("responder not bound after 10s")
	}
	if r.Addr() == nil {
		cancel()
		t.Fatalf("Run: %v", <-done)
	}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Run did not return 10s after its context ended")
		}
	})
	a := r.Addr().(*net.UDPAddr)
	if a.IP.To4() == nil {
		return r, fmt.Sprintf("udp6:[%s]:%d", a.IP, a.Port)
	}
	return r, a.String()
}

// entriesUnder lists the fixture's entries under prefix in order; SNMPv1
// does not see Counter64.
func entriesUnder(t testing.TB, prefix string, v1 bool) []asn1tree.Entry[asn1tree.Value] {
	tr := fixtureTree(t)
	p := oid(prefix)
	var out []asn1tree.Entry[asn1tree.Value]
	for i := 0; i < tr.Len(); i++ {
		o, v := tr.At(i)
		if o.HasPrefix(p) && !(v1 && v.Kind == asn1tree.Counter64) {
			out = append(out, asn1tree.Entry[asn1tree.Value]{OID: o, Val: v})
		}
	}
	return out
}

// stderrProblem returns the first line of a tool's stderr that is not
// net-snmp's note about creating its persistent directory.
func stderrProblem(stderr string) string {
	for _, line := range strings.Split(stderr, "\n") {
		if line != "" && !strings.HasPrefix(line, "Created directory:") {
			return line
		}
	}
	return ""
}

// checkWalk verifies a walk: exactly the wanted entries, in strictly
// increasing order, and a clean end (exit status 0, no error output).
func checkWalk(stdout, stderr string, runErr error, want []asn1tree.Entry[asn1tree.Value]) error {
	if runErr != nil || stderrProblem(stderr) != "" {
		return fmt.Errorf("exit %v, stderr %q", runErr, stderr)
	}
	vbs, other, err := parseOn(stdout)
	if err != nil {
		return err
	}
	// At the end of the MIB, snmpwalk prints the endOfMibView it got for
	// the last entry; SNMPv1 walks print "End of MIB" for noSuchName.
	if n := len(vbs); n > 1 && vbs[n-1].Type == toolEndOfMibView {
		if !vbs[n-1].OID.Equal(vbs[n-2].OID) {
			return fmt.Errorf("endOfMibView named %s after %s", vbs[n-1].OID, vbs[n-2].OID)
		}
		vbs = vbs[:n-1]
	}
	for _, line := range other {
		if line != "End of MIB" {
			return fmt.Errorf("unexpected output line %q", line)
		}
	}
	for i := 1; i < len(vbs); i++ {
		if asn1tree.Compare(vbs[i-1].OID, vbs[i].OID) >= 0 {
			return fmt.Errorf("OID %s follows %s", vbs[i].OID, vbs[i-1].OID)
		}
	}
	if len(vbs) != len(want) {
		return fmt.Errorf("%d varbinds, want %d", len(vbs), len(want))
	}
	for i, e := range want {
		if !sameAsTree(vbs[i], e.OID, e.Val) {
			return fmt.Errorf("varbind %d: %+v, want %s = %v", i+1, vbs[i], e.OID, e.Val)
		}
	}
	return nil
}

func TestToolsGet(t *testing.T) {
	_, addr := startResponder(t, Config{})
	want := entriesUnder(t, base+".1", false)
	args := []string{"-v2c", "-c", "public", "-t", "5", "-r", "0", addr}
	for _, e := range want {
		args = append(args, e.OID.String())
	}
	args = append(args, base+".1.99.0", base+".1.1.1")
	stdout, stderr, err := runTool(t, "snmpget", args...)
	if err != nil || stderrProblem(stderr) != "" {
		t.Fatalf("snmpget: %v %s", err, stderr)
	}
	vbs, other, err := parseOn(stdout)
	if err != nil || len(other) != 0 || len(vbs) != len(want)+2 {
		t.Fatalf("snmpget output (%v):\n%s", err, stdout)
	}
	for i, e := range want {
		if !sameAsTree(vbs[i], e.OID, e.Val) {
			t.Errorf("got %+v, want %s = %v", vbs[i], e.OID, e.Val)
		}
	}
	if got := vbs[len(want)]; got.Type != toolNoSuchObject {
		t.Errorf("missing object: %+v", got)
	}
	if got := vbs[len(want)+1]; got.Type != toolNoSuchInstance {
		t.Errorf("missing instance: %+v", got)
	}
}

func TestToolsGetV1Counter64(t *testing.T) {
	_, addr := startResponder(t, Config{})
	c64 := base + ".1.3.0"
	_, stderr, err := runTool(t, "snmpget", "-v1", "-c", "public", "-t", "5", "-r", "0", addr, base+".1.1.0", c64)
	if err == nil || !strings.Contains(stderr, "(noSuchName)") || !strings.Contains(stderr, "Failed object: ."+c64+"\n") {
		t.Errorf("v1 Get of a Counter64: exit %v, stderr %q; want noSuchName naming %s", err, stderr, c64)
	}
	stdout, stderr, err := runTool(t, "snmpget", "-v1", "-c", "public", "-t", "5", "-r", "0", addr, base+".1.2.0")
	vbs, _, _ := parseOn(stdout)
	if err != nil || len(vbs) != 1 || vbs[0].Value != "4000000000" {
		t.Errorf("v1 Get of a Gauge32: exit %v, %q %q", err, stdout, stderr)
	}
}

func TestToolsWalks(t *testing.T) {
	r, addr := startResponder(t, Config{})
	common := []string{"-c", "public", "-t", "5", "-r", "0", addr}
	for _, c := range []struct {
		tool string
		args []string
		root string
		v1   bool
		min  uint64 // fewest GetBulk requests the walk needs
	}{
		{"snmpwalk", []string{"-v1"}, base, true, 0},
		{"snmpwalk", []string{"-v1"}, base + ".1", true, 0},
		{"snmpwalk", []string{"-v2c"}, base, false, 0},
		{"snmpwalk", []string{"-v2c"}, base + ".1", false, 0},
		{"snmpbulkwalk", []string{"-v2c"}, base, false, 0},
		// 211 entries take 3 requests under the cap of 100 varbinds alone;
		// about 18 rows fit into 1472 bytes, so cutting to size makes 12.
		{"snmpbulkwalk", []string{"-v2c", "-Cr200"}, base, false, 6},
		{"snmpbulkwalk", []string{"-v2c", "-Cr7"}, base + ".3", false, 0},
	} {
		args := append(append(append([]string(nil), c.args...), common...), c.root)
		before := r.Stats().InGetBulks.Load()
		stdout, stderr, err := runTool(t, c.tool, args...)
		if err := checkWalk(stdout, stderr, err, entriesUnder(t, c.root, c.v1)); err != nil {
			t.Errorf("%s %v: %v", c.tool, args, err)
		}
		if n := r.Stats().InGetBulks.Load() - before; n < c.min {
			t.Errorf("%s %v: %d GetBulk requests, want at least %d", c.tool, args, n, c.min)
		}
	}
}

func TestToolsBulkGet(t *testing.T) {
	_, addr := startResponder(t, Config{})
	stdout, stderr, err := runTool(t, "snmpbulkget", "-v2c", "-c", "public", "-t", "5", "-r", "0", "-Cn1", "-Cr3",
		addr, base+".1.1.0", rowOID(199))
	vbs, _, perr := parseOn(stdout)
	if err != nil || perr != nil || len(vbs) != 4 {
		t.Fatalf("snmpbulkget: %v %v %q %q", err, perr, stdout, stderr)
	}
	last := oid(base + ".3.1.0")
	for i, w := range []struct {
		oid, typ string
	}{{base + ".1.2.0", "Gauge32"}, {rowOID(200), "STRING"}, {last.String(), "Counter64"}, {last.String(), toolEndOfMibView}} {
		if !vbs[i].OID.Equal(oid(w.oid)) || vbs[i].Type != w.typ {
			t.Errorf("varbind %d: %+v, want %s %s", i+1, vbs[i], w.oid, w.typ)
		}
	}
}

func TestToolsTooBigAndSet(t *testing.T) {
	r, addr := startResponder(t, Config{})
	args := []string{"-v2c", "-c", "public", "-t", "5", "-r", "0", addr}
	for i := 1; i <= 30; i++ {
		args = append(args, rowOID(i))
	}
	_, stderr, err := runTool(t, "snmpget", args...)
	if err == nil || !strings.Contains(stderr, "(tooBig)") {
		t.Errorf("30 rows in one Get: exit %v, stderr %q; want tooBig", err, stderr)
	}
	_, stderr, err = runTool(t, "snmpset", "-v2c", "-c", "public", "-t", "5", "-r", "0", addr, base+".1.4.0", "s", "x")
	if err == nil || !strings.Contains(stderr, "notWritable") {
		t.Errorf("snmpset: exit %v, stderr %q; want notWritable", err, stderr)
	}
	if c := r.Stats().Snapshot(); c.OutTooBigs != 1 || c.OutNotWritables != 1 {
		t.Errorf("counters %+v", c)
	}
}

func TestToolsWrongCommunity(t *testing.T) {
	r, addr := startResponder(t, Config{})
	for _, v := range []string{"-v1", "-v2c"} {
		start := time.Now()
		stdout, stderr, err := runTool(t, "snmpget", v, "-c", "wrong", "-t", "1", "-r", "0", addr, base+".1.1.0")
		if err == nil || stdout != "" || !strings.Contains(stderr, "Timeout: No Response") {
			t.Errorf("%s wrong community: exit %v, %q %q; want a timeout", v, err, stdout, stderr)
		}
		if d := time.Since(start); d > 15*time.Second {
			t.Errorf("%s: took %v", v, d)
		}
	}
	if c := r.Stats().Snapshot(); c.InBadCommunityNames != 2 || c.OutGetResponses != 0 || c.InPkts != 2 {
		t.Errorf("counters %+v", c)
	}
}

func TestToolsConcurrentBulkWalks(t *testing.T) {
	r, addr := startResponder(t, Config{})
	path := findTool(t, "snmpbulkwalk")
	want := entriesUnder(t, base, false)
	const walkers = 20
	errs := make([]error, walkers)
	var wg sync.WaitGroup
	for i := range walkers {
		dir := t.TempDir()
		wg.Add(1)
		go func() {
			defer wg.Done()
			// -Cr varies the request pattern from walker to walker.
			stdout, stderr, err := execTool(path, dir, "-v2c", "-c", "public", "-t", "10", "-r", "1",
				fmt.Sprintf("-Cr%d", 5+i*5), addr, base)
			if errors.Is(err, context.DeadlineExceeded) {
				errs[i] = err
				return
			}
			errs[i] = checkWalk(stdout, stderr, err, want)
		}()
	}
	wg.Wait() // each walker is bounded by toolTimeout
	for i, err := range errs {
		if err != nil {
			t.Errorf("walker %d: %v", i, err)
		}
	}
	if c := r.Stats().Snapshot(); c.InGetBulks < walkers || c.OutGetResponses != c.InGetBulks {
		t.Errorf("counters %+v", c)
	}
}

func TestToolsIPv6(t *testing.T) {
	findTool(t, "snmpget")
	if c, err := net.ListenPacket("udp6", "[::1]:0"); err != nil {
		t.Skipf("no IPv6 loopback on this machine: %v", err)
	} else {
		c.Close()
	}
	_, addr := startResponder(t, Config{Listen: "[::1]:0"})
	stdout, stderr, err := runTool(t, "snmpget", "-v2c", "-c", "public", "-t", "5", "-r", "0", addr, base+".1.4.0")
	vbs, _, _ := parseOn(stdout)
	if err != nil || len(vbs) != 1 || vbs[0].Value != `"hello responder"` {
		t.Errorf("snmpget over [::1]: exit %v, %q %q", err, stdout, stderr)
	}
}
