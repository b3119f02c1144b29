package responder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

// toolTimeout bounds every run of a net-snmp program.
const toolTimeout = 60 * time.Second

// toolVB is one line of -On output: ".1.3.6 = TYPE: value".
type toolVB struct {
	OID   asn1tree.OID
	Type  string // INTEGER, STRING, Counter64, ... or the exception text
	Value string
}

// Exception texts of net-snmp 5.9 for noSuchObject, noSuchInstance and
// endOfMibView.
const (
	toolNoSuchObject   = "No Such Object available on this agent at this OID"
	toolNoSuchInstance = "No Such Instance currently exists at this OID"
	toolEndOfMibView   = "No more variables left in this MIB View (It is past the end of the MIB tree)"
)

// findTool locates a net-snmp program; missing, it fails the test (it is
// skipped only under -short, where end-to-end tests do not run).
func findTool(t testing.TB, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test with net-snmp's tools: skipped under -short")
	}
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found: install the Debian package snmp (net-snmp's command-line tools), "+
			"for instance with `make test-deps`, or run only unit tests with -short", name)
	}
	return p
}

// runTool runs a net-snmp program (see execTool), failing the test when
// it does not finish in time.
func runTool(t testing.TB, name string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	stdout, stderr, err = execTool(findTool(t, name), t.TempDir(), args...)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
	return stdout, stderr, err
}

// execTool runs a net-snmp program with -On and dir as its only
// configuration directory, so nothing of the user's or the machine's setup
// interferes. Safe to call from any goroutine.
func execTool(path, dir string, args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, append([]string{"-On"}, args...)...)
	cmd.Env = []string{"HOME=" + dir, "SNMPCONFPATH=" + dir, "SNMP_PERSISTENT_DIR=" + dir, "MIBDIRS=" + dir, "MIBS="}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	if ctx.Err() != nil {
		return out.String(), errb.String(), fmt.Errorf("%s %v: still running after %v: %w", path, args, toolTimeout, ctx.Err())
	}
	return out.String(), errb.String(), err
}

// parseOn reads -On output; lines that are not varbinds are returned apart.
func parseOn(out string) (vbs []toolVB, other []string, err error) {
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		name, rest, ok := strings.Cut(line, " = ")
		if !ok || !strings.HasPrefix(name, ".") {
			if line != "" {
				other = append(other, line)
			}
			continue
		}
		o, err := asn1tree.Parse(name)
		if err != nil {
			return nil, nil, fmt.Errorf("output line %q: %w", line, err)
		}
		typ, val, ok := strings.Cut(rest, ": ")
		if !ok || strings.HasPrefix(rest, "No ") {
			typ, val = rest, ""
		}
		vbs = append(vbs, toolVB{OID: o, Type: typ, Value: val})
	}
	return vbs, other, nil
}

// toolText is how net-snmp prints a tree value with -On.
func toolText(v asn1tree.Value) (typ, val string) {
	switch v.Kind {
	case asn1tree.Integer32:
		return "INTEGER", want(v)
	case asn1tree.Gauge32:
		return "Gauge32", want(v)
	case asn1tree.Counter32:
		return "Counter32", want(v)
	case asn1tree.Counter64:
		return "Counter64", want(v)
	case asn1tree.OctetString:
		return "STRING", `"` + v.Str + `"`
	case asn1tree.TimeTicks:
		return "Timeticks", "(" + want(v) + ")"
	case asn1tree.ObjectIdentifier:
		return "OID", dotted(v.OID)
	}
	return v.Kind.String(), ""
}

// sameAsTree checks a tool's varbind against a tree entry; Timeticks are
// compared on their raw count only, the rest of the line is a duration.
func sameAsTree(vb toolVB, o asn1tree.OID, v asn1tree.Value) bool {
	typ, val := toolText(v)
	if !vb.OID.Equal(o) || vb.Type != typ {
		return false
	}
	if v.Kind == anyCounter32.Kind && v.Num == anyCounter32.Num {
		return true
	}
	if v.Kind == asn1tree.TimeTicks {
		return strings.HasPrefix(vb.Value, val+" ")
	}
	return vb.Value == val
}

// anyCounter32 in a wanted walk matches any Counter32: the responder's own
// counters move while they are walked.
var anyCounter32 = asn1tree.Value{Kind: asn1tree.Counter32, Num: 1<<64 - 1}

// mgmtWant is the snmp group as a walk shows it (without an SNMPv3
// engine), its counters matching any value.
func mgmtWant() []asn1tree.Entry[asn1tree.Value] {
	var e []asn1tree.Entry[asn1tree.Value]
	for _, m := range mgmtObjects {
		if m.v3 {
			continue
		}
		v := anyCounter32
		if m.oid[len(m.oid)-2] == 30 {
			v = asn1tree.Int(2) // snmpEnableAuthenTraps
		}
		e = append(e, asn1tree.Entry[asn1tree.Value]{OID: m.oid, Val: v})
	}
	return e
}
