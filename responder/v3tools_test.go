package responder

import (
	"strings"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/usm"
)

// allCombinations are a user for every auth × priv pair the responder
// takes (MD5 allowed explicitly), and noAuthNoPriv.
func allCombinations(t testing.TB) ([]usm.Credentials, []User) {
	creds := []usm.Credentials{testCreds("noauth", "", "")}
	for _, a := range []string{"MD5", "SHA", "SHA224", "SHA256", "SHA384", "SHA512"} {
		for _, p := range []string{"", "AES", "AES192", "AES256", "AES192C", "AES256C"} {
			creds = append(creds, testCreds(strings.ToLower(a+p), a, p))
		}
	}
	users := make([]User, len(creds))
	for i, c := range creds {
		users[i] = testUser(t, c)
	}
	return creds, users
}

// net-snmp's snmpget and snmpbulkwalk -v3, for every combination: the
// GET answers the value, the bulk walk prints exactly what the v2c bulk
// walk prints.
func TestToolsV3EveryCombination(t *testing.T) {
	creds, users := allCombinations(t)
	r, clock := v3Responder(t, users...)
	_, addr := runResponder(t, r)
	common := []string{"-t", "5", "-r", "0", "-Cr20"}
	v2c, stderr, err := runTool(t, "snmpbulkwalk", append([]string{"-v2c", "-c", "public", addr, base}, common...)...)
	if err := checkWalk(v2c, stderr, err, treeEntries(t, base)); err != nil {
		t.Fatalf("v2c walk: %v", err)
	}
	want := fixtureEntries()[3]
	for _, c := range creds {
		// Each tool discovers the engine: a second apart, as real time
		// would be, they stay within the discovery limit (10 a second).
		clock.advance(time.Second)
		args := append(netsnmpArgs(c), "-t", "5", "-r", "0", addr)
		out, stderr, err := runTool(t, "snmpget", append(args, want.OID.String())...)
		vbs, _, perr := parseOn(out)
		if err != nil || perr != nil || len(vbs) != 1 || !sameAsTree(vbs[0], want.OID, want.Val) {
			t.Errorf("%s: snmpget: exit %v, %q %q", c.User, err, out, stderr)
			continue
		}
		walk, stderr, err := runTool(t, "snmpbulkwalk", append(append(args, base), "-Cr20")...)
		if err != nil || walk != v2c {
			t.Errorf("%s: snmpbulkwalk: exit %v, stderr %q, %d bytes (v2c %d), same %v", c.User, err, stderr, len(walk), len(v2c), walk == v2c)
		}
	}
	if n := r.stats.WrongDigests.Load() + r.stats.InASNParseErrs.Load(); n != 0 {
		t.Errorf("%d digests or decryptions failed", n)
	}
}

// net-snmp with a wrong password: no value, usmStatsWrongDigests counted
// (net-snmp reports the Report as an authentication failure); an unknown
// user: unknownUserNames; both readable as counters by a good user.
func TestToolsV3Refusals(t *testing.T) {
	good := testCreds("u", "SHA256", "AES")
	r, _ := v3Responder(t, testUser(t, good))
	_, addr := runResponder(t, r)
	oid := fixtureEntries()[3].OID.String()
	bad := good
	bad.AuthPass = "not-the-password"
	out, stderr, err := runTool(t, "snmpget", append(netsnmpArgs(bad), "-t", "5", "-r", "0", addr, oid)...)
	if err == nil || strings.Contains(out, "hello") || !strings.Contains(stderr, "Authentication failure") {
		t.Errorf("wrong password: exit %v, %q %q", err, out, stderr)
	}
	nobody := good
	nobody.User = "nobody"
	out, stderr, err = runTool(t, "snmpget", append(netsnmpArgs(nobody), "-t", "5", "-r", "0", addr, oid)...)
	if err == nil || strings.Contains(out, "hello") || !strings.Contains(stderr, "Unknown user name") {
		t.Errorf("unknown user: exit %v, %q %q", err, out, stderr)
	}
	out, stderr, err = runTool(t, "snmpget", append(netsnmpArgs(good), "-t", "5", "-r", "0", addr,
		oidWrongDigests.String(), oidUnknownUserNames.String(), "1.3.6.1.6.3.10.2.1.2.0")...)
	want := "." + oidWrongDigests.String() + " = Counter32: 1\n." + oidUnknownUserNames.String() + " = Counter32: 1\n" +
		".1.3.6.1.6.3.10.2.1.2.0 = INTEGER: 7\n"
	if err != nil || out != want {
		t.Errorf("usmStats: exit %v, %q %q, want %q", err, out, stderr, want)
	}
}

// gosnmp as a second manager: discovery, Get and a bulk walk at
// SHA-512/AES-256 (Blumenthal) and SHA-1/AES-128.
func TestGosnmpV3Walk(t *testing.T) {
	cs := []usm.Credentials{testCreds("a", "SHA512", "AES256"), testCreds("b", "SHA", "AES"), testCreds("c", "SHA224", "AES192C")}
	var users []User
	for _, c := range cs {
		users = append(users, testUser(t, c))
	}
	r, _ := v3Responder(t, users...)
	_, addr := runResponder(t, r)
	want := treeEntries(t, base)
	for _, c := range cs {
		g := gosnmpClient(t, addr, c)
		var got []gosnmp.SnmpPDU
		if err := g.BulkWalk(base, func(p gosnmp.SnmpPDU) error { got = append(got, p); return nil }); err != nil {
			t.Fatalf("%s: %v", c.User, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d varbinds, want %d", c.User, len(got), len(want))
		}
		for i := range want {
			checkVarBind(t, got[i], want[i])
		}
	}
}
