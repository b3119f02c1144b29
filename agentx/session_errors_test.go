package agentx

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

// Two requests of ours in flight are answered in reverse order, with a
// stray Response in between: each caller gets its own answer, by packetID.
func TestResponsesMatchedByPacketID(t *testing.T) {
	m := newFakeMaster(t)
	cfg := testConfig(m.addr)
	cfg.PingInterval = 150 * time.Millisecond
	r := start(t, cfg)
	c := m.accept()
	c.handshake(cfg)
	waitFor(t, "Connected", r.sa.Connected)

	errc := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
		defer cancel()
		errc <- r.sa.Notify(ctx, []VarBind{{OID: SnmpTrapOID0, Value: asn1tree.Value{Kind: asn1tree.ObjectIdentifier, OID: b("0.1")}}})
	}()
	var got []*packet // Notify and Ping, in the order they arrived
	for len(got) < 2 {
		p := c.read()
		if p.typ != typeNotify && p.typ != typePing {
			t.Fatalf("master got %s, want a Notify and a Ping", p.typ)
		}
		got = append(got, p)
	}
	if got[0].typ == got[1].typ || got[0].packetID == got[1].packetID {
		t.Fatalf("in flight: %s %d and %s %d", got[0].typ, got[0].packetID, got[1].typ, got[1].packetID)
	}
	c.send(&packet{header: header{typ: typeResponse, flags: flagNetworkByteOrder, sessionID: 42, packetID: 9999}, resError: GenErr})
	for _, p := range []*packet{got[1], got[0]} {
		code := NoError
		if p.typ == typeNotify {
			code = ProcessingError
		}
		c.respond(p, code)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, ProcessingError) {
			t.Errorf("Notify returned %v, want the processingError meant for it", err)
		}
	case <-time.After(ioTimeout):
		t.Fatal("Notify did not return")
	}
	// The Ping got its noError: the session lives on and pings again.
	c.respond(c.expect(typePing), NoError)
	if !r.sa.Connected() || r.logs.count("keep-alive") != 0 {
		t.Errorf("the Ping was not answered with its own Response:\n%s", r.logs)
	}
	waitFor(t, "the stray Response logged", func() bool {
		return r.logs.count(`msg="agentx: Response nobody waits for" packetID=9999`) == 1
	})
}

// A refused capability is logged once; the session comes up and serves.
func TestAddAgentCapsRefused(t *testing.T) {
	m := newFakeMaster(t)
	cfg := testConfig(m.addr)
	cfg.Capabilities = []Capability{
		{ID: asn1tree.MustParse("1.3.6.1.4.1.32473.4.1"), Description: "refused"},
		{ID: asn1tree.MustParse("1.3.6.1.4.1.32473.4.2"), Description: "accepted"},
	}
	r := start(t, cfg)
	c := m.accept()
	c.respond(c.expect(typeOpen), NoError)
	c.respond(c.expect(typeRegister), NoError)
	c.respond(c.expect(typeAddAgentCaps), RequestDenied)
	if add := c.expect(typeAddAgentCaps); !add.id.Equal(cfg.Capabilities[1].ID) {
		t.Errorf("second AddAgentCaps for %s", add.id)
	} else {
		c.respond(add, NoError)
	}
	waitFor(t, "Connected", r.sa.Connected)
	if resp := c.ask(&packet{header: header{typ: typeGet, flags: flagNetworkByteOrder}, ranges: []searchRange{{start: b("2.0")}}}); vbStrings(resp.varbinds) != "2.0=Gauge32:42" {
		t.Errorf("Get answered %s", vbStrings(resp.varbinds))
	}
	lines := r.logs.lines("refused an agent capability")
	if len(lines) != 1 || !strings.Contains(lines[0], "id=1.3.6.1.4.1.32473.4.1 ") || !strings.Contains(lines[0], "requestDenied") {
		t.Errorf("refusal logged %d times, want once with its ID and code:\n%s", len(lines), r.logs)
	}
}

// A master that no longer knows our registrations or capabilities at
// shutdown does not stop the Close.
func TestShutdownStepsRefused(t *testing.T) {
	m := newFakeMaster(t)
	cfg := testConfig(m.addr)
	cfg.Subtrees = []asn1tree.OID{asn1tree.MustParse(testBase), asn1tree.MustParse("1.3.6.1.4.1.32473.3")}
	cfg.Capabilities = []Capability{{ID: asn1tree.MustParse("1.3.6.1.4.1.32473.4.1"), Description: "caps"}}
	r := start(t, cfg)
	c := m.accept()
	c.handshake(cfg)
	waitFor(t, "Connected", r.sa.Connected)
	r.cancel()
	c.respond(c.expect(typeRemoveAgentCaps), UnknownAgentCaps)
	c.respond(c.expect(typeUnregister), UnknownRegistration)
	if un := c.expect(typeUnregister); !un.subtree.Equal(cfg.Subtrees[1]) {
		t.Errorf("second Unregister for %s", un.subtree)
	} else {
		c.respond(un, NoError)
	}
	if cl := c.expect(typeClose); cl.reason != reasonShutdown {
		t.Errorf("Close %s, want reasonShutdown", cl.reason)
	} else {
		c.respond(cl, NoError)
	}
	c.expectEOF()
	r.stop(t)
	if n := r.logs.count("refused a shutdown step"); n != 2 || r.logs.count("unknownAgentCaps") != 1 || r.logs.count("unknownRegistration") != 1 {
		t.Errorf("%d refusals logged, want 2:\n%s", n, r.logs)
	}
}

// A session given up after Open succeeded is closed with a reason before
// the connection is dropped: at once, or RequestTimeout after a Register
// left unanswered.
func TestSetupFailureSendsClose(t *testing.T) {
	synctest.Test(t, testSetupFailureSendsClose)
}

func testSetupFailureSendsClose(t *testing.T) {
	m := newPipeMaster(t)
	cfg := testConfig(m.addr)
	r := m.start(cfg)
	cases := []struct {
		name   string
		answer func(c *masterConn, reg *packet)
		reason closeReason
		after  time.Duration // from the Register to the Close
	}{
		{"Register refused", func(c *masterConn, reg *packet) { c.respond(reg, DuplicateRegistration) }, reasonOther, 0},
		{"unparseable Response", func(c *masterConn, reg *packet) {
			raw := appendHeader(nil, &header{typ: typeResponse, flags: flagNetworkByteOrder, sessionID: 42,
				transactionID: reg.transactionID, packetID: reg.packetID})
			raw = append(raw, 0, 0, 0, 7) // res.sysUpTime only: 4 bytes short
			setU32(raw[16:], 4, true)
			c.writeRaw(raw)
		}, reasonParseError, 0},
		{"no Response", func(*masterConn, *packet) {}, reasonTimeouts, cfg.RequestTimeout},
		{"subagent stopped", func(*masterConn, *packet) { r.cancel() }, reasonShutdown, 0},
	}
	for _, tc := range cases {
		c := m.accept()
		c.respond(c.expect(typeOpen), NoError)
		reg := c.expect(typeRegister)
		asked := time.Now()
		tc.answer(c, reg)
		if cl := c.expect(typeClose); cl.reason != tc.reason || cl.sessionID != 42 {
			t.Errorf("%s: Close %s in session %d, want %s in 42", tc.name, cl.reason, cl.sessionID, tc.reason)
		}
		if took := time.Since(asked); took != tc.after {
			t.Errorf("%s: Close %v after the Register, want %v", tc.name, took, tc.after)
		}
		c.expectEOF()
	}
	r.stop(t)
}

func TestRegisterRefused(t *testing.T) {
	m := newFakeMaster(t)
	cfg := testConfig(m.addr)
	r := start(t, cfg)
	for i := 0; i < 3; i++ {
		c := m.accept()
		c.respond(c.expect(typeOpen), NoError)
		c.respond(c.expect(typeRegister), DuplicateRegistration)
		if cl := c.expect(typeClose); cl.reason != reasonOther || cl.sessionID != 42 {
			t.Errorf("Close %s in session %d after a refused Register, want reasonOther in 42", cl.reason, cl.sessionID)
		}
		c.expectEOF()
	}
	c := m.accept()
	c.handshake(cfg)
	waitFor(t, "Connected", r.sa.Connected)
	if n := r.logs.count("duplicateRegistration"); n != 1 {
		t.Errorf("refusal logged %d times, want once:\n%s", n, r.logs)
	}
}

// A refused optional registration (another subagent serves the log) leaves
// the session up, logged; a refused required one still closes it.
func TestOptionalRegisterRefused(t *testing.T) {
	m := newFakeMaster(t)
	cfg := testConfig(m.addr)
	cfg.Registrations = []Registration{{Subtree: asn1tree.MustParse("1.3.6.1.2.1.92"), Optional: true}}
	r := start(t, cfg)
	c := m.accept()
	c.respond(c.expect(typeOpen), NoError)
	for range testSubtrees {
		c.respond(c.expect(typeRegister), NoError)
	}
	if reg := c.expect(typeRegister); !reg.subtree.Equal(cfg.Registrations[0].Subtree) {
		t.Fatalf("Register %s, want the optional 1.3.6.1.2.1.92", reg.subtree)
	} else {
		c.respond(reg, DuplicateRegistration)
	}
	for range cfg.Capabilities {
		c.respond(c.expect(typeAddAgentCaps), NoError)
	}
	waitFor(t, "Connected", r.sa.Connected)
	if n := r.logs.count("refused an optional registration"); n != 1 {
		t.Errorf("the refusal logged %d times, want once:\n%s", n, r.logs)
	}
}
