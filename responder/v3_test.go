package responder

import (
	"strings"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/usm"
)

// A request of every auth × priv combination gets its value, decrypted
// and decoded by gosnmp with the user's keys.
func TestV3GetEveryCombination(t *testing.T) {
	var users []User
	var creds []usm.Credentials
	for _, a := range []string{"MD5", "SHA", "SHA224", "SHA256", "SHA384", "SHA512"} {
		for _, p := range []string{"", "AES", "AES192", "AES256", "AES192C", "AES256C"} {
			c := testCreds(strings.ToLower(a+p), a, p)
			creds = append(creds, c)
			users = append(users, testUser(t, c))
		}
	}
	r, _ := v3Responder(t, users...)
	want := fixtureEntries()[3]
	for _, c := range creds {
		var s scratch
		out := r.handle(v3Packet(t, c, 7, 0, gosnmp.GetRequest, want.OID.String()), &s)
		if out == nil {
			t.Fatalf("%s: no answer: %v", c.User, s.why)
		}
		p := decodeV3(t, c, out)
		if p.PDUType != gosnmp.GetResponse || len(p.Variables) != 1 || p.RequestID != 4242 {
			t.Fatalf("%s: %v %d varbinds id %d", c.User, p.PDUType, len(p.Variables), p.RequestID)
		}
		checkVarBind(t, p.Variables[0], want)
	}
}

// The probe of discovery gets a Report usmStatsUnknownEngineIDs carrying
// the engine's ID, boots and time; so does a request for another engine.
func TestV3Discovery(t *testing.T) {
	c := testCreds("u", "SHA256", "AES")
	r, clock := v3Responder(t, testUser(t, c))
	clock.advance(42 * time.Second)
	probe := &gosnmp.SnmpPacket{Version: gosnmp.Version3, MsgFlags: gosnmp.NoAuthNoPriv | gosnmp.Reportable,
		SecurityModel: gosnmp.UserSecurityModel, SecurityParameters: &gosnmp.UsmSecurityParameters{Logger: gosnmp.NewLogger(nil)},
		PDUType: gosnmp.GetRequest, MsgID: 5, RequestID: 77, MsgMaxSize: 65507}
	b, err := probe.MarshalMsg()
	if err != nil {
		t.Fatal(err)
	}
	var s scratch
	out := r.handle(b, &s)
	if out == nil {
		t.Fatalf("no Report: %v", s.why)
	}
	p := decodeV3(t, testCreds("probe", "", ""), out)
	sp := p.SecurityParameters.(*gosnmp.UsmSecurityParameters)
	if sp.AuthoritativeEngineID != string(testEngineID) || sp.AuthoritativeEngineBoots != 7 || sp.AuthoritativeEngineTime != 42 {
		t.Errorf("Report's engine %x boots %d time %d", sp.AuthoritativeEngineID, sp.AuthoritativeEngineBoots, sp.AuthoritativeEngineTime)
	}
	if p.MsgFlags != gosnmp.NoAuthNoPriv || p.MsgID != 5 || p.RequestID != 77 {
		t.Errorf("Report flags %v msgID %d request-id %d", p.MsgFlags, p.MsgID, p.RequestID)
	}
	if o, n := reportOf(t, p); o != "."+oidUnknownEngineIDs.String() || n != 1 {
		t.Errorf("Report %s = %d", o, n)
	}
	// Not reportable: counted, no answer.
	probe.MsgFlags = gosnmp.NoAuthNoPriv
	b, _ = probe.MarshalMsg()
	if out := r.handle(b, &s); out != nil || r.stats.UnknownEngineIDs.Load() != 2 {
		t.Errorf("unreportable probe: answer %v, counter %d", out != nil, r.stats.UnknownEngineIDs.Load())
	}
}

// A wrong password gets a Report usmStatsWrongDigests, unsigned, and no
// value; an unknown user usmStatsUnknownUserNames; a level the user has
// no key for usmStatsUnsupportedSecLevels.
func TestV3Refusals(t *testing.T) {
	good := testCreds("u", "SHA256", "AES")
	r, _ := v3Responder(t, testUser(t, good), testUser(t, testCreds("authonly", "SHA", "")))
	oid := fixtureEntries()[3].OID.String()
	cases := []struct {
		c       usm.Credentials
		counter string
	}{
		{usm.Credentials{User: "u", AuthProto: "SHA256", AuthPass: "wrong-password", PrivProto: "AES", PrivPass: testPrivPass}, oidWrongDigests.String()},
		{usm.Credentials{User: "nobody", AuthProto: "SHA256", AuthPass: testAuthPass}, oidUnknownUserNames.String()},
		{testCreds("authonly", "SHA", "AES"), oidUnsupportedSecLevels.String()},
	}
	for i, k := range cases {
		var s scratch
		out := r.handle(v3Packet(t, k.c, 7, 0, gosnmp.GetRequest, oid), &s)
		if out == nil {
			t.Fatalf("%s: no Report: %v", k.counter, s.why)
		}
		if strings.Contains(string(out), "hello responder") {
			t.Errorf("%s: the value was sent", k.counter)
		}
		p := decodeV3(t, testCreds(k.c.User, "", ""), out)
		if p.MsgFlags != gosnmp.NoAuthNoPriv {
			t.Errorf("%s: Report at %v", k.counter, p.MsgFlags)
		}
		if o, n := reportOf(t, p); o != "."+k.counter || n != 1 {
			t.Errorf("case %d: Report %s = %d, want %s = 1", i, o, n, k.counter)
		}
	}
	if n := r.stats.WrongDigests.Load(); n != 1 {
		t.Errorf("usmStatsWrongDigests %d", n)
	}
}

// A request replayed more than 150 s after it was made gets a Report
// usmStatsNotInTimeWindows, signed (authNoPriv) with the user's key and
// carrying the engine's time; within 150 s it is answered. Another boots
// is out of the window too.
func TestV3TimeWindow(t *testing.T) {
	c := testCreds("u", "SHA256", "AES")
	r, clock := v3Responder(t, testUser(t, c))
	oid := fixtureEntries()[3].OID.String()
	req := v3Packet(t, c, 7, 0, gosnmp.GetRequest, oid)
	var s scratch
	clock.advance(150 * time.Second)
	if out := r.handle(req, &s); out == nil || decodeV3(t, c, out).PDUType != gosnmp.GetResponse {
		t.Fatalf("at 150 s: %v", s.why)
	}
	clock.advance(time.Second)
	out := r.handle(req, &s)
	if out == nil {
		t.Fatalf("replay at 151 s: no Report: %v", s.why)
	}
	p := decodeV3(t, testCreds("u", "SHA256", ""), out)
	if p.MsgFlags != gosnmp.AuthNoPriv {
		t.Errorf("notInTimeWindow Report at %v, want authNoPriv", p.MsgFlags)
	}
	if o, n := reportOf(t, p); o != "."+oidNotInTimeWindows.String() || n != 1 {
		t.Errorf("Report %s = %d", o, n)
	}
	if sp := p.SecurityParameters.(*gosnmp.UsmSecurityParameters); sp.AuthoritativeEngineTime != 151 {
		t.Errorf("Report's time %d, want 151", sp.AuthoritativeEngineTime)
	}
	// The Report is signed: gosnmp checks the digest with the user's key.
	g := &gosnmp.GoSNMP{Version: gosnmp.Version3, SecurityModel: gosnmp.UserSecurityModel, MsgFlags: gosnmp.AuthNoPriv,
		SecurityParameters: gosnmpSP(t, testCreds("u", "SHA256", ""), 0, 0), Logger: gosnmp.NewLogger(nil)}
	if _, err := g.UnmarshalTrap(append([]byte(nil), out...), true); err != nil {
		t.Errorf("the Report's digest: %v", err)
	}
	if out := r.handle(v3Packet(t, c, 6, 151, gosnmp.GetRequest, oid), &s); out == nil ||
		r.stats.NotInTimeWindows.Load() != 2 {
		t.Errorf("boots 6: answer %v, counter %d", out != nil, r.stats.NotInTimeWindows.Load())
	}
}

// A user reads only its subtrees, and below its minimum level gets
// authorizationError; with no community v1/v2c are off and counted.
func TestV3AccessAndCommunityOff(t *testing.T) {
	c := testCreds("u", "SHA256", "AES")
	u := testUser(t, c)
	u.Subtrees = []asn1tree.OID{oid(base + ".2")}
	low := testCreds("low", "SHA256", "AES")
	lu := testUser(t, low)
	lu.MinLevel = AuthPriv
	r := newTestResponder(t, Config{System: testSystem(), V3: &V3{EngineID: testEngineID, Boots: 1, Users: []User{u, lu}}})
	var s scratch
	out := r.handle(v3Packet(t, c, 1, 0, gosnmp.GetRequest, base+".1.4.0", base+".2.1.0"), &s)
	p := decodeV3(t, c, out)
	if p.Variables[0].Type != gosnmp.NoSuchObject || p.Variables[1].Type != gosnmp.OctetString {
		t.Errorf("outside/inside the subtree: %v, %v", p.Variables[0].Type, p.Variables[1].Type)
	}
	out = r.handle(v3Packet(t, c, 1, 0, gosnmp.GetNextRequest, "1.3"), &s)
	if p := decodeV3(t, c, out); p.Variables[0].Name != "."+base+".2.1.0" {
		t.Errorf("GetNext from 1.3: %s", p.Variables[0].Name)
	}
	lowAuth := testCreds("low", "SHA256", "")
	out = r.handle(v3Packet(t, lowAuth, 1, 0, gosnmp.GetRequest, base+".1.4.0"), &s)
	if p := decodeV3(t, lowAuth, out); p.Error != gosnmp.AuthorizationError || strings.Contains(string(out), "hello") {
		t.Errorf("below the minimum level: %v", p.Error)
	}
	off, err := New(Config{V3: &V3{EngineID: testEngineID, Boots: 1, Users: []User{u}}},
		func() asn1tree.View { return fixtureTree(t) }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out := off.handle(reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetRequest, 0, 0, base+".1.4.0"), &s); out != nil ||
		off.stats.InBadVersions.Load() != 1 {
		t.Errorf("v2c with no community: answered %v, snmpInBadVersions %d", out != nil, off.stats.InBadVersions.Load())
	}
	if err := Check(Config{}); err == nil {
		t.Error("no community and no v3: accepted")
	}
}

// A message of an unknown version is counted as such (snmpInBadVersions)
// even when the scratch's previous message was v3 and refused.
func TestV3ThenBadVersion(t *testing.T) {
	c := testCreds("u", "SHA256", "AES")
	r, _ := v3Responder(t, testUser(t, c))
	var s scratch
	bad := usm.Credentials{User: "u", AuthProto: "SHA256", AuthPass: "wrong-password"}
	if out := r.handle(v3Packet(t, bad, 7, 0, gosnmp.GetRequest, fixtureEntries()[3].OID.String()), &s); out == nil {
		t.Fatalf("v3 request: no Report: %v", s.why)
	}
	if out := r.handle([]byte{0x30, 0x03, 0x02, 0x01, 0x07}, &s); out != nil ||
		r.stats.InBadVersions.Load() != 1 || r.stats.InASNParseErrs.Load() != 0 {
		t.Errorf("version 7: answered %v, snmpInBadVersions %d, snmpInASNParseErrs %d (%v)",
			out != nil, r.stats.InBadVersions.Load(), r.stats.InASNParseErrs.Load(), s.why)
	}
}
