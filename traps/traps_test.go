package traps_test

import (
	"encoding/hex"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/traps"
	"github.com/perfagent/subagent/usm"
)

var base = asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1}

// engine is the agent's engine the tests send v3 traps from.
var engine = usm.Engine{ID: []byte("\x80\x00\x7e\xd9\x04trapstest"), Boots: 3, Start: time.Now()}

func note(specific int) traps.Notification {
	return traps.Notification{
		Enterprise: base, Specific: specific, Uptime: 12340 * time.Millisecond,
		Vars: []traps.VarBind{
			{OID: base.Append(4, 1, 6, 0), Value: asn1tree.Counter(1 << 40)},
			{OID: base.Append(14, 0, 1, 0), Value: asn1tree.Str("busydisks")},
			{OID: base.Append(14, 0, 3, 0), Value: asn1tree.Int(-80)},
		},
	}
}

// without64 is n minus its Counter64 VarBinds, as SNMPv1 needs it.
func without64(n traps.Notification) traps.Notification {
	var vs []traps.VarBind
	for _, v := range n.Vars {
		if v.Value.Kind != asn1tree.Counter64 {
			vs = append(vs, v)
		}
	}
	n.Vars = vs
	return n
}

func send(t *testing.T, d traps.Dest, n traps.Notification) *traps.Sender {
	t.Helper()
	s, err := traps.New([]traps.Dest{d}, engine, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	s.Send(n)
	return s
}

func waitCounts(t *testing.T, s *traps.Sender, ok func(traps.Counts) bool) traps.Counts {
	t.Helper()
	testutil.Eventually(t, "the sender's counts", 10*time.Second, func() bool { return ok(s.Counts()) })
	return s.Counts()
}

// Every direct version reaches a real snmptrapd with its VarBinds.
func TestDirectVersionsReachSnmptrapd(t *testing.T) {
	const user, auth, priv = "hotuser", "authpass123", "privpass123"
	trapd := snmpdtest.StartTrapdWith(t, snmpdtest.TrapdOptions{Config: []string{
		"createUser -e 0x" + hex.EncodeToString(engine.ID) + " " + user + " SHA " + auth + " AES " + priv, // traps: our engine
		"createUser " + user + " SHA " + auth + " AES " + priv,                                            // informs: snmptrapd's engine
	}})
	v3 := traps.Dest{Address: trapd.Addr, Version: "v3", User: user, AuthProto: "SHA", AuthPass: auth, PrivProto: "AES", PrivPass: priv}
	v3inform := v3
	v3inform.Inform, v3inform.Retries = true, 1
	cases := []struct {
		name string
		d    traps.Dest
		want []string
	}{
		{"v1", traps.Dest{Address: trapd.Addr, Version: "v1", Community: "public"},
			[]string{"Enterprise Specific Trap (11)", "." + base.String()}},
		{"v2c", traps.Dest{Address: trapd.Addr, Version: "v2c", Community: "public"},
			[]string{".1.3.6.1.6.3.1.1.4.1.0 = OID: ." + base.String() + ".0.12"}},
		{"v2c-inform", traps.Dest{Address: trapd.Addr, Version: "v2c", Community: "public", Inform: true, Retries: 1},
			[]string{".1.3.6.1.6.3.1.1.4.1.0 = OID: ." + base.String() + ".0.13"}},
		{"v3-authpriv", v3, []string{".1.3.6.1.6.3.1.1.4.1.0 = OID: ." + base.String() + ".0.14"}},
		{"v3-authpriv-inform", v3inform, []string{".1.3.6.1.6.3.1.1.4.1.0 = OID: ." + base.String() + ".0.15"}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := note(11 + i)
			want := append(c.want,
				"."+base.String()+`.14.0.1.0 = STRING: "busydisks"`,
				"."+base.String()+".14.0.3.0 = INTEGER: -80")
			if c.d.Version == "v1" {
				n = without64(n)
			} else {
				want = append(want, "."+base.String()+".4.1.6.0 = Counter64: 1099511627776")
			}
			s := send(t, c.d, n)
			if log, err := trapd.WaitFor(10*time.Second, want...); err != nil {
				t.Fatalf("%v\n%s", err, log)
			}
			if c := waitCounts(t, s, func(c traps.Counts) bool { return c.Sent == 1 }); c.Sent != 1 || c.Failed != 0 {
				t.Errorf("counts %+v", c)
			}
		})
	}
	// The v2c and v3 notifications carry sysUpTime.0 first.
	if !strings.Contains(trapd.Log(), ".1.3.6.1.2.1.1.3.0 = Timeticks: (1234)") {
		t.Errorf("no sysUpTime.0 of 12.34 s:\n%s", trapd.Log())
	}
}

// An inform to a real port where nobody answers fails after its retries
// and marks the destination down; of a burst larger than the queue, every
// notification is either tried (and failed) or dropped and counted, and
// Close returns. TestSlowDestinationHoldsUpOnlyItself checks the timing
// on a fake clock.
func TestSlowDestinationFailsAndDrops(t *testing.T) {
	silent, err := net.ListenPacket("udp", "127.0.0.1:0") // reads nothing, answers nothing
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	s, err := traps.New([]traps.Dest{{Address: silent.LocalAddr().String(), Version: "v2c", Community: "c",
		Inform: true, Retries: 1, Timeout: 200 * time.Millisecond, Queue: 2}}, engine, nil)
	if err != nil {
		t.Fatal(err)
	}
	const burst = 50
	for i := 0; i < burst; i++ {
		s.Send(note(1))
	}
	c := waitCounts(t, s, func(c traps.Counts) bool { return c.Failed+c.Dropped == burst })
	if c.Failed < 1 || c.Down != 1 || c.Dropped < 1 || c.Sent != 0 {
		t.Errorf("counts %+v: want failures, drops, the destination down and nothing sent", c)
	}
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waited more than 5s")
	}
}

func TestDestChecksNameTheField(t *testing.T) {
	for _, c := range []struct {
		d     traps.Dest
		field string
	}{
		{traps.Dest{Address: "nohost", Version: "v2c", Community: "c"}, "address"},
		{traps.Dest{Address: "127.0.0.1:162", Version: "v4", Community: "c"}, "version"},
		{traps.Dest{Address: "127.0.0.1:162", Version: "v2c"}, "community"},
		{traps.Dest{Address: "127.0.0.1:162", Version: "v1", Community: "c", Inform: true}, "inform"},
		{traps.Dest{Address: "127.0.0.1:162", Version: "v3"}, "user"},
		{traps.Dest{Address: "127.0.0.1:162", Version: "v3", User: "u", AuthPass: "short"}, "auth_password"},
		{traps.Dest{Address: "127.0.0.1:162", Version: "v3", User: "u", AuthPass: "12345678", AuthProto: "SHA1024"}, "auth_protocol"},
		{traps.Dest{Address: "127.0.0.1:162", Version: "v3", User: "u", PrivPass: "12345678"}, "priv_password"},
		{traps.Dest{Address: "127.0.0.1:162", Version: "v2c", Community: "c", Retries: 11}, "retries"},
	} {
		if err := c.d.Check(); err == nil || !strings.HasPrefix(err.Error(), c.field+":") {
			t.Errorf("%+v: %v, want an error about %s", c.d, err, c.field)
		}
	}
}

// A v2c trap to a port nobody listens on: the ICMP refusal shows on a
// later send, which counts as failed and marks the destination down.
func TestRefusingDestinationIsCounted(t *testing.T) {
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := c.LocalAddr().String()
	c.Close() // now refusing
	s, err := traps.New([]traps.Dest{{Address: addr, Version: "v2c", Community: "c"}}, engine, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// One send at a time, the next once the last is done: the refusal of
	// one shows on a later one, and the failed one is the last.
	sent := uint64(0)
	testutil.Eventually(t, "a send to count as failed", 10*time.Second, func() bool {
		switch c := s.Counts(); {
		case c.Sent+c.Failed < sent:
			return false
		case c.Failed > 0:
			return true
		}
		s.Send(note(1))
		sent++
		return false
	})
	if c := s.Counts(); c.Failed == 0 || c.Down != 1 {
		t.Errorf("counts %+v: want failures and the destination down", c)
	}
}

// An SNMPv1 destination refuses a notification holding Counter64 (RFC
// 3584 3.2): nothing goes on the wire, it counts as failed, and the
// destination is not marked down; the next one without goes out.
func TestV1RefusesCounter64(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	s := send(t, traps.Dest{Address: pc.LocalAddr().String(), Version: "v1", Community: "public"}, note(5))
	if c := waitCounts(t, s, func(c traps.Counts) bool { return c.Failed == 1 }); c.Failed != 1 || c.Down != 0 || c.Sent != 0 {
		t.Fatalf("counts %+v, want one failure and the destination up", c)
	}
	s.Send(without64(note(6)))
	buf := make([]byte, 2048)
	if err := pc.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	n, _, err := pc.ReadFrom(buf)
	if err != nil {
		t.Fatalf("no trap arrived: %v", err)
	}
	p, err := (&gosnmp.GoSNMP{}).SnmpDecodePacket(buf[:n])
	if err != nil {
		t.Fatal(err)
	}
	if p.Version != gosnmp.Version1 || p.SpecificTrap != 6 {
		t.Errorf("first datagram: version %v specific %d, want the v1 trap 6 (trap 5 must not be sent)", p.Version, p.SpecificTrap)
	}
}
