package responder

import (
	"bytes"
	"net"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/usm"
)

// The handler drops what a source's failure limits drop: counted in
// usmStats and Throttled; a right password from a spent source gets no
// answer either (no guess is told right), another source does.
func TestV3ThrottleHandler(t *testing.T) {
	c := testCreds("u", "SHA256", "AES")
	r, clock := v3Responder(t, testUser(t, c))
	wrong := c
	wrong.AuthPass = "not-the-password"
	bad := v3Packet(t, wrong, 7, 0, gosnmp.GetRequest, base+".1.0")
	good := v3Packet(t, c, 7, 0, gosnmp.GetRequest, base+".1.0")
	attacker := netip.MustParseAddrPort("127.0.0.1:4000")
	other := netip.MustParseAddrPort("[::1]:4000")
	send := func(from netip.AddrPort, pkt []byte) bool {
		s := scratch{from: from}
		return r.handle(bytes.Clone(pkt), &s) != nil
	}
	lim := usm.DefaultFailureLimits
	answered := 0
	for range 1000 {
		if send(attacker, bad) {
			answered++
		}
	}
	if answered != lim.Burst {
		t.Errorf("%d of 1000 wrong digests answered at once, want the burst %d", answered, lim.Burst)
	}
	if n := r.stats.WrongDigests.Load(); n != 1000 {
		t.Errorf("usmStatsWrongDigests %d, want 1000", n)
	}
	if n := r.stats.Throttled.Load(); n != uint64(1000-answered) {
		t.Errorf("Throttled %d, want %d", n, 1000-answered)
	}
	if send(attacker, good) {
		t.Error("the right password from the spent source was answered")
	}
	if !send(other, good) {
		t.Error("another source was not answered")
	}
	// A minute refills PerMinute failures, at most the burst.
	clock.advance(time.Minute)
	if !send(attacker, good) {
		t.Error("the attacker's source still spent a minute later")
	}
	// Discoveries have limits of their own.
	probe := &gosnmp.SnmpPacket{Version: gosnmp.Version3, MsgFlags: gosnmp.NoAuthNoPriv | gosnmp.Reportable,
		SecurityModel: gosnmp.UserSecurityModel, SecurityParameters: &gosnmp.UsmSecurityParameters{Logger: gosnmp.NewLogger(nil)},
		PDUType: gosnmp.GetRequest, MsgID: 5, RequestID: 77, MsgMaxSize: 65507}
	disc, err := probe.MarshalMsg()
	if err != nil {
		t.Fatal(err)
	}
	answered = 0
	for range 1000 {
		if send(attacker, disc) {
			answered++
		}
	}
	if want := usm.DefaultDiscoveryLimits.Burst; answered != want {
		t.Errorf("%d of 1000 discoveries answered at once, want the burst %d", answered, want)
	}
	if n := r.stats.UnknownEngineIDs.Load(); n != 1000 {
		t.Errorf("usmStatsUnknownEngineIDs %d, want 1000", n)
	}
}

// flood is a running v3 responder, its manager at 127.0.0.2 (answered
// once), and an attacker's socket at 127.0.0.1 with a wrong-digest request.
type flood struct {
	r     *Responder
	clock *testClock
	legit *gosnmp.GoSNMP
	conn  *net.UDPConn
	to    *net.UDPAddr
	bad   []byte
}

func newFlood(t *testing.T) flood {
	t.Helper()
	c := testCreds("nms", "SHA256", "AES")
	r, clock := v3Responder(t, testUser(t, c))
	_, addr := runResponder(t, r)
	legit := gosnmpClientFrom(t, "127.0.0.2:0", addr, c)
	if _, err := legit.Get([]string{base + ".1.0"}); err != nil {
		t.Skipf("no manager at 127.0.0.2 (loopback without 127.0.0.0/8?): %v", err)
	}
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	wrong := c
	wrong.AuthPass = "guess-0001"
	return flood{r: r, clock: clock, legit: legit, conn: conn, to: net.UDPAddrFromAddrPort(netip.MustParseAddrPort(addr)),
		bad: v3Packet(t, wrong, 7, 0, gosnmp.GetRequest, base+".1.0")}
}

// Over UDP: a wrong-digest flood from 127.0.0.1 gets at most the burst
// plus PerMinute a minute of answers, all counted in
// usmStatsWrongDigests, while a manager at 127.0.0.2 is answered all the
// time. The test's clock moves a minute between rounds.
func TestV3ThrottleFloodOverUDP(t *testing.T) {
	f := newFlood(t)
	r, clock, legit, conn, to, bad := f.r, f.clock, f.legit, f.conn, f.to, f.bad
	// A v2c Get answered after the batch before it: one goroutine
	// answers in order, so every Report of the batch has come before.
	sync := reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetRequest, 0, 0, base+".1.0")
	lim := usm.DefaultFailureLimits
	const rounds, batches, batch = 3, 10, 50
	buf := make([]byte, 65536)
	sent, reports := 0, 0
	for round := range rounds {
		if round > 0 {
			clock.advance(time.Minute)
		}
		got := 0
		for range batches {
			for range batch {
				if _, err := conn.WriteToUDP(bad, to); err != nil {
					t.Fatal(err)
				}
			}
			sent += batch
			if _, err := conn.WriteToUDP(sync, to); err != nil {
				t.Fatal(err)
			}
			for {
				conn.SetReadDeadline(time.Now().Add(10 * time.Second))
				n, err := conn.Read(buf)
				if err != nil {
					t.Fatalf("no answer to the v2c Get after a batch: %v", err)
				}
				if bytes.Contains(buf[:n], []byte("public")) { // the v2c answer
					break
				}
				got++
			}
			if _, err := legit.Get([]string{base + ".1.0"}); err != nil {
				t.Fatalf("round %d: the manager at 127.0.0.2 got no answer: %v", round, err)
			}
		}
		// A minute refills PerMinute, but a source holds at most the burst.
		if got > lim.Burst {
			t.Errorf("round %d: %d of %d wrong digests answered, over the limits %+v", round, got, batches*batch, lim)
		}
		if got == 0 {
			t.Errorf("round %d: no wrong digest answered; the limit leaves the burst", round)
		}
		reports += got
	}
	if n := r.stats.WrongDigests.Load(); n != uint64(sent) {
		t.Errorf("usmStatsWrongDigests %d, want every one of the %d sent", n, sent)
	}
	if n := r.stats.Throttled.Load(); n != uint64(sent-reports) {
		t.Errorf("Throttled %d, want %d (sent %d, answered %d)", n, sent-reports, sent, reports)
	}
	t.Logf("%d wrong digests in %d rounds a minute apart: %d answered; the manager at 127.0.0.2 answered %d times", sent, rounds, reports, rounds*batches+1)
}

// p99Get is the 99th percentile of the manager g's Gets, one after the
// other for a second, and their number.
func p99Get(t *testing.T, g interface {
	Get([]string) (*gosnmp.SnmpPacket, error)
}) (time.Duration, int) {
	t.Helper()
	var d []time.Duration
	for end := time.Now().Add(time.Second); time.Now().Before(end); {
		t0 := time.Now()
		if _, err := g.Get([]string{base + ".1.0"}); err != nil {
			t.Fatalf("Get %d: %v", len(d), err)
		}
		d = append(d, time.Since(t0))
	}
	slices.Sort(d)
	return d[len(d)*99/100], len(d)
}

// A manager at 127.0.0.2 is answered during a wrong-digest flood from
// 127.0.0.1 of 10,000 a second, its p99 within a bound generous for a
// shared machine; the figures are logged.
func TestV3ThrottleFloodLatency(t *testing.T) {
	if testing.Short() {
		t.Skip("floods the responder for a few seconds")
	}
	f := newFlood(t)
	r, legit, conn, to, bad := f.r, f.legit, f.conn, f.to, f.bad
	quiet, nq := p99Get(t, legit)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	// 10,000 a second, in bursts of 100: an unbounded flood would fill
	// the socket's buffer, which every source shares (a volume the
	// kernel, not the responder, must be protected from).
	wg.Go(func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				for range 100 {
					conn.WriteToUDP(bad, to)
				}
			}
		}
	})
	before := r.stats.WrongDigests.Load()
	flood, nf := p99Get(t, legit)
	close(stop)
	wg.Wait()
	n := r.stats.WrongDigests.Load() - before
	t.Logf("p99 of a manager's Get: %v quiet (%d Gets), %v during %d wrong digests from another address (%d Gets; %d Reports in all)",
		quiet, nq, flood, n, nf, r.stats.OutReports.Load())
	if n == 0 {
		t.Fatal("the flood never reached the responder")
	}
	if flood > 500*time.Millisecond {
		t.Errorf("p99 %v during the flood (quiet: %v)", flood, quiet)
	}
}
