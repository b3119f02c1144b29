package agentx

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// A PDU of the master's cut mid-stream (in its header or its payload)
// closes the session exactly Config.Timeout after it stopped, not at the
// next Ping a minute later, and the subagent reconnects. A PDU completed
// just within the timeout, and a session quiet for longer than it, are
// served as usual.
func TestIncompletePDUClosesSession(t *testing.T) {
	synctest.Test(t, testIncompletePDUClosesSession)
}

func testIncompletePDUClosesSession(t *testing.T) {
	m := newPipeMaster(t)
	cfg := testConfig(m.addr)
	cfg.Timeout = time.Second
	cfg.PingInterval = time.Minute
	r := m.start(cfg)
	c := m.accept()
	c.handshake(cfg)
	settled(t, "Connected", r.sa.Connected)

	get := func(packetID uint32) []byte {
		p := &packet{header: header{version: version1, typ: typeGet, flags: flagNetworkByteOrder, sessionID: 42,
			transactionID: packetID, packetID: packetID}, ranges: []searchRange{{start: b("2.0")}}}
		raw, err := appendPacket(nil, p)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	answered := func(what string, packetID uint32) {
		t.Helper()
		resp := c.expect(typeResponse)
		if resp.packetID != packetID || vbStrings(resp.varbinds) != "2.0=Gauge32:42" {
			t.Fatalf("%s: answered packet %d with %s", what, resp.packetID, vbStrings(resp.varbinds))
		}
	}

	// The sleeps (on the bubble's clock) stand for a slow network and an
	// idle master: nothing may happen during them.
	raw := get(1)
	c.writeRaw(raw[:headerLen+3])
	time.Sleep(cfg.Timeout - time.Nanosecond)
	c.writeRaw(raw[headerLen+3:])
	answered("a PDU arriving in two parts within the timeout", 1)
	time.Sleep(2 * cfg.Timeout)
	c.writeRaw(get(2))
	answered("a request after a quiet spell longer than the timeout", 2)

	for i, cut := range []int{headerLen / 2, headerLen + 4} {
		raw := get(uint32(10 + i))
		start := time.Now()
		c.writeRaw(raw[:cut])
		if cl := c.expect(typeClose); cl.reason != reasonTimeouts {
			t.Errorf("cut at %d: Close %s, want reasonTimeouts", cut, cl.reason)
		}
		c.expectEOF()
		if took := time.Since(start); took != cfg.Timeout {
			t.Errorf("cut at %d: session closed after %v, want %v", cut, took, cfg.Timeout)
		}
		c = m.accept()
		c.handshake(cfg)
		settled(t, "Connected again", r.sa.Connected)
		c.writeRaw(get(20))
		answered("the new session", 20)
	}
	for _, want := range []string{
		fmt.Sprintf("header stopped at %d of %d bytes for 1s; closing the session", headerLen/2, headerLen),
		fmt.Sprintf("Get PDU payload stopped at 4 of %d bytes for 1s", len(get(0))-headerLen),
	} {
		if lines := r.logs.lines(want); len(lines) != 1 || !strings.Contains(lines[0], "session lost, reconnecting") {
			t.Errorf("want one 'session lost' line with %q:\n%s", want, r.logs)
		}
	}
}
