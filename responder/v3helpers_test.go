package responder

import (
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/usm"
)

// testEngineID is the responder's snmpEngineID in the v3 tests.
var testEngineID = []byte("\x80\x00\x7e\xd9\x04v3-test-engine")

const (
	testAuthPass = "auth-pass-1234"
	testPrivPass = "priv-pass-5678"
)

// testCreds are a user's credentials; priv "" means authNoPriv, auth ""
// noAuthNoPriv.
func testCreds(name, auth, priv string) usm.Credentials {
	c := usm.Credentials{User: name}
	if auth != "" {
		c.AuthProto, c.AuthPass = auth, testAuthPass
	}
	if priv != "" {
		c.PrivProto, c.PrivPass = priv, testPrivPass
	}
	return c
}

// testUser localizes c's keys to testEngineID.
func testUser(t testing.TB, c usm.Credentials) User {
	t.Helper()
	c, err := c.Norm()
	if err != nil {
		t.Fatal(err)
	}
	k, err := usm.Localize(c, testEngineID)
	if err != nil {
		t.Fatal(err)
	}
	return User{Name: c.User, Keys: k, AllowMD5: true}
}

// testClock is a clock the test moves; it starts at the responder's start.
type testClock struct{ off atomic.Int64 }

func (c *testClock) advance(d time.Duration) { c.off.Add(int64(d)) }

// v3Responder is a responder with SNMPv3 (boots 7) and the community
// "public", answering from the fixture, its clock the test's.
func v3Responder(t testing.TB, users ...User) (*Responder, *testClock) {
	t.Helper()
	r := newTestResponder(t, Config{System: testSystem(), V3: &V3{EngineID: testEngineID, Boots: 7, Users: users}})
	c := &testClock{}
	r.now = func() time.Time { return r.start.Add(time.Duration(c.off.Load())) }
	return r, c
}

// gosnmpSP are gosnmp's security parameters for c, authoritative engine
// testEngineID at boots and time.
func gosnmpSP(t testing.TB, c usm.Credentials, boots, time uint32) *gosnmp.UsmSecurityParameters {
	t.Helper()
	sp := &gosnmp.UsmSecurityParameters{UserName: c.User, AuthoritativeEngineID: string(testEngineID),
		AuthoritativeEngineBoots: boots, AuthoritativeEngineTime: time, Logger: gosnmp.NewLogger(nil),
		AuthenticationProtocol: gosnmp.NoAuth, PrivacyProtocol: gosnmp.NoPriv}
	if c.AuthPass != "" {
		a, _ := usm.FindAuth(c.AuthProto)
		sp.AuthenticationProtocol, sp.AuthenticationPassphrase = a.Proto, c.AuthPass
	}
	if c.PrivPass != "" {
		p, _ := usm.FindPriv(c.PrivProto)
		sp.PrivacyProtocol, sp.PrivacyPassphrase = p.Proto, c.PrivPass
	}
	if err := sp.InitSecurityKeys(); err != nil {
		t.Fatal(err)
	}
	return sp
}

func levelFlags(c usm.Credentials) gosnmp.SnmpV3MsgFlags {
	switch {
	case c.PrivPass != "":
		return gosnmp.AuthPriv
	case c.AuthPass != "":
		return gosnmp.AuthNoPriv
	}
	return gosnmp.NoAuthNoPriv
}

// v3Packet builds a reportable v3 request with gosnmp.
func v3Packet(t testing.TB, c usm.Credentials, boots, time uint32, typ gosnmp.PDUType, oids ...string) []byte {
	t.Helper()
	sp := gosnmpSP(t, c, boots, time)
	p := &gosnmp.SnmpPacket{Version: gosnmp.Version3, MsgFlags: levelFlags(c) | gosnmp.Reportable,
		SecurityModel: gosnmp.UserSecurityModel, SecurityParameters: sp, PDUType: typ, MsgID: 99,
		RequestID: 4242, MsgMaxSize: 65507, ContextEngineID: string(testEngineID), MaxRepetitions: 10}
	for _, o := range oids {
		p.Variables = append(p.Variables, gosnmp.SnmpPDU{Name: o, Type: gosnmp.Null})
	}
	if err := sp.InitPacket(p); err != nil {
		t.Fatal(err)
	}
	b, err := p.MarshalMsg()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decodeV3 decodes a copy of a v3 message (gosnmp zeroes its digest in
// place) with c's keys: gosnmp decrypts; it does not check the digest here.
func decodeV3(t testing.TB, c usm.Credentials, out []byte) *gosnmp.SnmpPacket {
	t.Helper()
	g := &gosnmp.GoSNMP{Version: gosnmp.Version3, SecurityModel: gosnmp.UserSecurityModel,
		MsgFlags: levelFlags(c), SecurityParameters: gosnmpSP(t, c, 0, 0), Logger: gosnmp.NewLogger(nil)}
	p, err := g.SnmpDecodePacket(append([]byte(nil), out...))
	if err != nil {
		t.Fatalf("decoding the v3 answer: %v", err)
	}
	return p
}

// reportOf is the counter OID and value of a Report, failing otherwise.
func reportOf(t testing.TB, p *gosnmp.SnmpPacket) (string, uint) {
	t.Helper()
	if p.PDUType != gosnmp.Report || len(p.Variables) != 1 {
		t.Fatalf("want a Report with one varbind, got %v with %d", p.PDUType, len(p.Variables))
	}
	v := p.Variables[0]
	if v.Type != gosnmp.Counter32 {
		t.Fatalf("Report varbind %s is %v, not Counter32", v.Name, v.Type)
	}
	return v.Name, v.Value.(uint)
}

// gosnmpClient is a gosnmp v3 manager of addr (host:port) as c.
func gosnmpClient(t testing.TB, addr string, c usm.Credentials) *gosnmp.GoSNMP {
	t.Helper()
	return gosnmpClientFrom(t, "", addr, c)
}

// gosnmpClientFrom is gosnmpClient sending from local (host:port; "": any).
func gosnmpClientFrom(t testing.TB, local, addr string, c usm.Credentials) *gosnmp.GoSNMP {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	var p uint16
	fmt.Sscan(port, &p)
	sp := &gosnmp.UsmSecurityParameters{UserName: c.User, AuthenticationProtocol: gosnmp.NoAuth, PrivacyProtocol: gosnmp.NoPriv}
	if c.AuthPass != "" {
		a, _ := usm.FindAuth(c.AuthProto)
		sp.AuthenticationProtocol, sp.AuthenticationPassphrase = a.Proto, c.AuthPass
	}
	if c.PrivPass != "" {
		pp, _ := usm.FindPriv(c.PrivProto)
		sp.PrivacyProtocol, sp.PrivacyPassphrase = pp.Proto, c.PrivPass
	}
	g := &gosnmp.GoSNMP{Target: host, Port: p, Version: gosnmp.Version3, SecurityModel: gosnmp.UserSecurityModel,
		MsgFlags: levelFlags(c), SecurityParameters: sp, Timeout: 5 * time.Second, Retries: 0,
		MaxRepetitions: 50, Transport: "udp", LocalAddr: local}
	if err := g.Connect(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Conn.Close() })
	return g
}

// netsnmpArgs are snmpget's -v3 options for c (net-snmp's names: AES-192
// and AES-256 are Blumenthal's, AES-192-C and AES-256-C Reeder's).
func netsnmpArgs(c usm.Credentials) []string {
	a := []string{"-v3", "-u", c.User, "-l", "noAuthNoPriv"}
	if c.AuthPass != "" {
		name := map[string]string{"MD5": "MD5", "SHA": "SHA", "SHA224": "SHA-224", "SHA256": "SHA-256",
			"SHA384": "SHA-384", "SHA512": "SHA-512"}[strings.ToUpper(c.AuthProto)]
		a = append(a, "-a", name, "-A", c.AuthPass)
		a[4] = "authNoPriv"
	}
	if c.PrivPass != "" {
		name := map[string]string{"AES": "AES", "AES192": "AES-192", "AES256": "AES-256",
			"AES192C": "AES-192-C", "AES256C": "AES-256-C"}[strings.ToUpper(c.PrivProto)]
		a = append(a, "-x", name, "-X", c.PrivPass)
		a[4] = "authPriv"
	}
	return a
}

// treeEntries lists the fixture's entries under prefix.
func treeEntries(t testing.TB, prefix string) []asn1tree.Entry[asn1tree.Value] {
	return entriesUnder(t, prefix, false)
}
