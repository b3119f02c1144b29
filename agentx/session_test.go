package agentx

import (
	"context"
	"net"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

func TestHandshakeAndShutdown(t *testing.T) {
	m := newFakeMaster(t)
	cfg := testConfig(m.addr)
	cfg.Subtrees = []asn1tree.OID{asn1tree.MustParse(testBase), asn1tree.MustParse("1.3.6.1.4.1.32473.3")}
	cfg.Capabilities = []Capability{{ID: asn1tree.MustParse("1.3.6.1.4.1.32473.4.1"), Description: "perfagent caps"}}
	cfg.Timeout = 1500 * time.Millisecond
	cfg.Priority = 100
	r := start(t, cfg)
	c := m.accept()

	open := c.expect(typeOpen)
	if open.timeout != 2 || open.sessionID != 0 || open.flags != flagNetworkByteOrder {
		t.Errorf("Open timeout %d, sessionID %d, flags %#x; want 2 (1.5 s rounded up), 0, NETWORK_BYTE_ORDER", open.timeout, open.sessionID, open.flags)
	}
	c.respond(open, NoError)
	for _, st := range cfg.Subtrees {
		reg := c.expect(typeRegister)
		if reg.priority != 100 || reg.sessionID != 42 || !reg.subtree.Equal(st) || reg.rangeSubID != 0 {
			t.Errorf("Register %+v", *reg)
		}
		if r.sa.Connected() {
			t.Error("Connected before every subtree was registered")
		}
		c.respond(reg, NoError)
	}
	add := c.expect(typeAddAgentCaps)
	c.respond(add, NoError)
	waitFor(t, "Connected", r.sa.Connected)

	r.cancel()
	rm := c.expect(typeRemoveAgentCaps)
	if !rm.id.Equal(cfg.Capabilities[0].ID) {
		t.Errorf("RemoveAgentCaps %s", rm.id)
	}
	c.respond(rm, NoError)
	for _, st := range cfg.Subtrees {
		un := c.expect(typeUnregister)
		if !un.subtree.Equal(st) || un.priority != 100 {
			t.Errorf("Unregister %+v", *un)
		}
		c.respond(un, NoError)
	}
	cl := c.expect(typeClose)
	if cl.reason != reasonShutdown {
		t.Errorf("Close reason %s", cl.reason)
	}
	c.respond(cl, NoError)
	c.expectEOF()
	r.stop(t)
	if r.sa.Connected() {
		t.Error("Connected after Run returned")
	}
	if r.logs.count("session open") != 1 || r.logs.count("subagent stopped") != 1 {
		t.Errorf("logs:\n%s", r.logs)
	}
}

func TestRequestsInBothByteOrders(t *testing.T) {
	m := newFakeMaster(t)
	cfg := testConfig(m.addr)
	start(t, cfg)
	c := m.accept()
	c.handshake(cfg)

	for _, flags := range []uint8{flagNetworkByteOrder, 0} {
		req := &packet{header: header{typ: typeGetNext, flags: flags, transactionID: 7}, ranges: []searchRange{
			{start: asn1tree.MustParse(testBase), include: true, end: asn1tree.MustParse("1.3.6.1.4.1.32473.2")},
			{start: b("3.0"), end: asn1tree.MustParse("1.3.6.1.4.1.32473.2")},
			{start: b("20.1.3.3"), end: asn1tree.MustParse("1.3.6.1.4.1.32473.2")},
		}}
		resp := c.ask(req)
		if got, want := vbStrings(resp.varbinds), "1.0=Counter64:1099511627776 4.0=OctetString:hello 20.1.3.3=endOfMibView"; got != want {
			t.Errorf("flags %#x: GetNext answered %s, want %s", flags, got, want)
		}
		get := c.ask(&packet{header: header{typ: typeGet, flags: flags, transactionID: 8},
			ranges: []searchRange{{start: b("2.0")}, {start: b("99")}}})
		if got := vbStrings(get.varbinds); got != "2.0=Gauge32:42 99=noSuchObject" {
			t.Errorf("flags %#x: Get answered %s", flags, got)
		}
		bulk := c.ask(&packet{header: header{typ: typeGetBulk, flags: flags, transactionID: 9}, nonRepeaters: 0, maxRepetitions: 2,
			ranges: []searchRange{{start: b("9.0")}}})
		if got := vbStrings(bulk.varbinds); got != "10.0=Integer:10 20.1.2.1=Integer:21" {
			t.Errorf("flags %#x: GetBulk answered %s", flags, got)
		}
		set := c.ask(&packet{header: header{typ: typeTestSet, flags: flags, transactionID: 10},
			varbinds: []varbind{{typ: vbInteger, name: b("3.0"), num: 1}}})
		if set.resError != NotWritable || set.resIndex != 1 {
			t.Errorf("TestSet answered %s index %d", set.resError, set.resIndex)
		}
		// CleanupSet gets no answer, so the next answer is the Ping's.
		c.send(&packet{header: header{typ: typeCleanupSet, flags: flags, sessionID: 42, transactionID: 10, packetID: 500}})
		if ping := c.ask(&packet{header: header{typ: typePing, flags: flags}}); ping.resError != NoError {
			t.Errorf("Ping answered %s", ping.resError)
		}
	}

	// A re-sent request (same packetID) is answered every time.
	dup := &packet{header: header{typ: typeGetNext, flags: flagNetworkByteOrder, transactionID: 11, packetID: 900},
		ranges: []searchRange{{start: b("1.0")}}}
	for i := 0; i < 3; i++ {
		if resp := c.ask(dup); vbStrings(resp.varbinds) != "2.0=Gauge32:42" {
			t.Errorf("duplicate %d answered %s", i, vbStrings(resp.varbinds))
		}
	}
	// A request for another session gets notOpen.
	if resp := c.ask(&packet{header: header{typ: typeGet, sessionID: 41}, ranges: []searchRange{{start: b("1.0")}}}); resp.resError != NotOpen {
		t.Errorf("wrong session answered %s", resp.resError)
	}
}

func TestMalformedRequests(t *testing.T) {
	m := newFakeMaster(t)
	cfg := testConfig(m.addr)
	r := start(t, cfg)
	c := m.accept()
	c.handshake(cfg)

	good := func() {
		t.Helper()
		resp := c.ask(&packet{header: header{typ: typeGetNext, flags: flagNetworkByteOrder}, ranges: []searchRange{{start: b("1.0")}}})
		if resp.resError != NoError || len(resp.varbinds) != 1 {
			t.Fatalf("session did not survive: %s with %d VarBinds", resp.resError, len(resp.varbinds))
		}
	}
	bad := map[string]string{
		"OID cut short":      `01 06 10 00 | 0000002a | 00000001 | 00000063 | 00000008 | 03 04 00 00 | 00000001`,
		"unknown type":       `01 63 10 00 | 0000002a | 00000001 | 00000063 | 00000000`,
		"unknown VarBind":    `01 08 10 00 | 0000002a | 00000001 | 00000063 | 00000008 | 0063 0000 | 00000000`,
		"n_subid 200":        `01 05 10 00 | 0000002a | 00000001 | 00000063 | 00000008 | c8 00 00 00 | 00000000`,
		"little-endian junk": `01 06 00 00 | 2a000000 | 01000000 | 63000000 | 04000000 | ffffffff`,
	}
	for name, wire := range bad {
		c.writeRaw(unhex(t, wire))
		resp := c.expect(typeResponse)
		if resp.resError != ParseError || resp.packetID != 0x63 || resp.sessionID != 42 {
			t.Errorf("%s: answered %s for packet %d session %d, want parseError for 99 in 42", name, resp.resError, resp.packetID, resp.sessionID)
		}
		good()
	}
	// A master-only PDU is answered genErr.
	if resp := c.ask(&packet{header: header{typ: typeRegister, flags: flagNetworkByteOrder}, subtree: b("1")}); resp.resError != GenErr {
		t.Errorf("Register from the master answered %s", resp.resError)
	}
	if n := r.logs.count(`level=WARN msg="agentx: answering a malformed PDU`); n != 1 {
		t.Errorf("malformed PDUs logged %d times at warn level, want once:\n%s", n, r.logs)
	}
}

// A header the subagent cannot trust ends the session; it reconnects.
func TestUnreadableHeaderReconnects(t *testing.T) {
	m := newFakeMaster(t)
	cfg := testConfig(m.addr)
	r := start(t, cfg)
	cases := []struct {
		name, wire string
		answered   bool
	}{
		{"payload too long", `01 06 10 00 | 0000002a | 00000001 | 00000063 | 00100000`, true},
		{"version 2", `02 06 10 00 | 0000002a | 00000001 | 00000063 | 00000000`, false},
	}
	for _, tc := range cases {
		c := m.accept()
		c.handshake(cfg)
		c.writeRaw(unhex(t, tc.wire))
		if tc.answered {
			if resp := c.expect(typeResponse); resp.resError != ParseError {
				t.Errorf("%s: answered %s", tc.name, resp.resError)
			}
		}
		if cl := c.expect(typeClose); cl.reason != reasonParseError || cl.sessionID != 42 {
			t.Errorf("%s: Close %s for session %d, want reasonParseError for 42", tc.name, cl.reason, cl.sessionID)
		}
		c.expectEOF()
	}
	c := m.accept()
	c.handshake(cfg)
	waitFor(t, "Connected", r.sa.Connected)
	if n := r.logs.count("session lost"); n != 2 {
		t.Errorf("%d 'session lost' lines, want 2:\n%s", n, r.logs)
	}
}

func TestReconnectAfterMasterGoesAway(t *testing.T) {
	m := newFakeMaster(t)
	cfg := testConfig(m.addr)
	cfg.Capabilities = []Capability{{ID: asn1tree.MustParse("1.3.6.1.4.1.32473.4.1"), Description: "caps"}}
	r := m.start(cfg)

	// 1: the master closes the connection.
	c := m.accept()
	c.handshake(cfg)
	waitFor(t, "Connected", r.sa.Connected)
	c.c.Close()

	// 2: the master sends Close.
	c = m.accept()
	c.sessionID = 43
	c.handshake(cfg)
	c.send(&packet{header: header{typ: typeClose, flags: flagNetworkByteOrder, sessionID: 43}, reason: reasonShutdown})
	c.expectEOF()

	// 3: the master is gone for a while (a restart): retries are logged once.
	c = m.accept()
	c.handshake(cfg)
	waitFor(t, "Connected", r.sa.Connected)
	m.ln.Close()
	os.Remove(m.path)
	c.c.Close()
	failed := m.failedDials()
	waitFor(t, "three failed retries", func() bool { return m.failedDials() >= failed+3 })
	if r.sa.Connected() {
		t.Error("Connected while the master is down")
	}
	m.listen()
	c = m.accept()
	c.sessionID = 44
	c.handshake(cfg)
	waitFor(t, "Connected", r.sa.Connected)
	if resp := c.ask(&packet{header: header{typ: typeGet, flags: flagNetworkByteOrder}, ranges: []searchRange{{start: b("2.0")}}}); vbStrings(resp.varbinds) != "2.0=Gauge32:42" {
		t.Errorf("after reconnect: %s", vbStrings(resp.varbinds))
	}
	// Once per kind of failure: the dial error may change while the master
	// comes back (no socket, then a socket not yet listening), and each
	// kind is logged once, however many retries fail with it.
	if kinds := r.logs.lines("cannot open a session"); len(kinds) == 0 || len(kinds) > 2 {
		t.Errorf("retries logged %d times, want once or twice:\n%s", len(kinds), r.logs)
	} else if len(kinds) == 2 && errOf(kinds[0]) == errOf(kinds[1]) {
		t.Errorf("the same failure logged twice:\n%s", r.logs)
	}
	if n := r.logs.count("session open"); n != 4 {
		t.Errorf("%d 'session open' lines, want 4:\n%s", n, r.logs)
	}
}

// Pings come every PingInterval (default 15 s); one unanswered for
// RequestTimeout (default 5 s) closes the session, and the subagent dials
// again after BackoffMin, the session having lived. Exact on the bubble's
// clock.
func TestPingFailureReconnects(t *testing.T) {
	synctest.Test(t, testPingFailureReconnects)
}

func testPingFailureReconnects(t *testing.T) {
	m := newPipeMaster(t)
	cfg := testConfig(m.addr)
	cfg.PingInterval, cfg.RequestTimeout = 0, 0
	r := m.start(cfg)
	c := m.accept()
	c.handshake(cfg)
	up := time.Now()
	for i := 1; i <= 3; i++ {
		p := c.expect(typePing)
		if at := time.Since(up); at != time.Duration(i)*DefaultPingInterval {
			t.Errorf("Ping %d at %v, want %v", i, at, time.Duration(i)*DefaultPingInterval)
		}
		c.respond(p, NoError)
	}
	c.expect(typePing) // left unanswered: the subagent must give up on this connection
	sent := time.Now()
	if cl := c.expect(typeClose); cl.reason != reasonTimeouts {
		t.Errorf("Close %s after a Ping timeout, want reasonTimeouts", cl.reason)
	}
	if took := time.Since(sent); took != DefaultRequestTimeout {
		t.Errorf("gave up on the Ping after %v, want %v", took, DefaultRequestTimeout)
	}
	c.expectEOF()
	dropped := time.Now()
	c = m.accept()
	if gap := time.Since(dropped); gap != cfg.BackoffMin {
		t.Errorf("dialed again %v after the drop, want %v", gap, cfg.BackoffMin)
	}
	c.handshake(cfg)
	settled(t, "Connected", r.sa.Connected)
	if r.logs.count("keep-alive") != 1 {
		t.Errorf("ping failure not logged once:\n%s", r.logs)
	}
	// A Ping answered notOpen (the master forgot us) also reconnects.
	c.respond(c.expect(typePing), NotOpen)
	c.expectEOF()
	c = m.accept()
	c.handshake(cfg)
}

func TestOpenOverTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &fakeMaster{t: t, ln: ln, addr: "tcp:" + ln.Addr().String()}
	t.Cleanup(func() { ln.Close() })
	cfg := testConfig(m.addr)
	r := start(t, cfg)
	c := m.accept()
	c.handshake(cfg)
	waitFor(t, "Connected", r.sa.Connected)
	if resp := c.ask(&packet{header: header{typ: typeGet}, ranges: []searchRange{{start: b("3.0")}}}); vbStrings(resp.varbinds) != "3.0=Integer:-7" {
		t.Errorf("over TCP: %s", vbStrings(resp.varbinds))
	}
}

func TestRunTwiceAndNew(t *testing.T) {
	r := start(t, testConfig("unix:"+socketDir(t)+"/nobody"))
	waitFor(t, "Run to start", r.sa.running.Load)
	if err := r.sa.Run(context.Background()); err == nil {
		t.Error("a second Run started")
	}
	view := testTree(t)
	bad := []Config{
		{Subtrees: nil},
		{Address: "udp:localhost:705", Subtrees: testSubtrees},
		{Subtrees: []asn1tree.OID{{}}},
		{Subtrees: testSubtrees, Timeout: 256 * time.Second},
		{Subtrees: testSubtrees, BackoffMin: time.Second, BackoffMax: time.Millisecond},
		{Subtrees: testSubtrees, ID: make(asn1tree.OID, 129)},
		{Subtrees: testSubtrees, Capabilities: []Capability{{}}},
	}
	for _, cfg := range bad {
		if _, err := New(cfg, view); err == nil {
			t.Errorf("New accepted %+v", cfg)
		}
	}
	if _, err := New(Config{Subtrees: testSubtrees}, nil); err == nil {
		t.Error("New accepted a nil view")
	}
	sa, err := New(Config{Subtrees: testSubtrees}, view)
	if err != nil {
		t.Fatal(err)
	}
	if c := sa.cfg; c.Address != DefaultAddress || c.Priority != 127 || c.PingInterval != 15*time.Second ||
		c.BackoffMin != 100*time.Millisecond || c.BackoffMax != 5*time.Second || c.RequestTimeout != 5*time.Second {
		t.Errorf("defaults: %+v", c)
	}
}

func TestParseAddress(t *testing.T) {
	good := map[string][2]string{
		"unix:/var/agentx/master": {"unix", "/var/agentx/master"},
		"/var/agentx/master":      {"unix", "/var/agentx/master"},
		"tcp:localhost:705":       {"tcp", "localhost:705"},
		"tcp:127.0.0.1:7050":      {"tcp", "127.0.0.1:7050"},
		"tcp:localhost":           {"tcp", "localhost:705"},
		"tcp:[::1]:705":           {"tcp", "[::1]:705"},
		"tcp:[::1]":               {"tcp", "[::1]:705"},
		"TCP:host:1":              {"tcp", "host:1"},
	}
	for in, want := range good {
		n, a, err := ParseAddress(in)
		if err != nil || n != want[0] || a != want[1] {
			t.Errorf("ParseAddress(%q) = %q, %q, %v; want %q, %q", in, n, a, err, want[0], want[1])
		}
	}
	for _, in := range []string{"", "master", "unix:", "udp:host:1", "tcp:", "tcp::705", "tcp:host:0", "tcp:host:70000", "tcp:host:x", "tcp:::1"} {
		if _, _, err := ParseAddress(in); err == nil {
			t.Errorf("ParseAddress(%q) succeeded", in)
		}
	}
}

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("cannot count file descriptors: %v", err)
	}
	return len(fds)
}

// Connections that fail at every stage leave no descriptor behind.
func TestNoFDLeakAcrossReconnects(t *testing.T) {
	m := newFakeMaster(t)
	cfg := testConfig(m.addr)
	// Long enough for the refusal to arrive first on a loaded machine;
	// each unanswered Open waits it out.
	cfg.RequestTimeout = time.Second
	before := openFDs(t)
	r := start(t, cfg)
	for i := 0; i < 6; i++ {
		c := m.accept()
		switch i % 3 {
		case 0: // dropped before Open is answered
		case 1: // Open refused
			c.respond(c.expect(typeOpen), OpenFailed)
		case 2: // Open never answered: the subagent times out
			c.expect(typeOpen)
			c.expectEOF()
		}
		c.c.Close()
	}
	m.ln.Close()
	os.Remove(m.path)
	waitFor(t, "dial failures", func() bool { return r.logs.count("connect: no such file") > 0 })
	r.stop(t)
	if after := openFDs(t); after > before {
		t.Errorf("%d descriptors open after 6 failed sessions, %d before", after, before)
	}
	if n := r.logs.count("openFailed"); n != 1 {
		t.Errorf("openFailed logged %d times:\n%s", n, r.logs)
	}
}
