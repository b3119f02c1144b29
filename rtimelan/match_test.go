package rtimelan

import (
	"net/netip"
	"testing"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

var (
	lo4 = netip.MustParseAddr("127.0.0.1")
	lo6 = netip.MustParseAddr("::1")
)

func echo(t testing.TB, v6, reply bool, id, seq uint16, data []byte) []byte {
	t.Helper()
	typ := icmp.Type(ipv4.ICMPTypeEchoReply)
	switch {
	case v6 && reply:
		typ = ipv6.ICMPTypeEchoReply
	case v6:
		typ = ipv6.ICMPTypeEchoRequest
	case !reply:
		typ = ipv4.ICMPTypeEcho
	}
	b, err := (&icmp.Message{Type: typ, Body: &icmp.Echo{ID: int(id), Seq: int(seq), Data: data}}).Marshal(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMatchTellsRepliesApart(t *testing.T) {
	t0 := time.Now()
	m := NewMatcher([]byte("nonce-0123456789"), time.Minute)
	p := m.Payload()
	a := m.Next("a", lo4, t0)
	b := m.Next("b", lo6, t0)
	c := m.Next("c", lo4, t0)

	check := func(what string, v6 bool, id uint16, pkt []byte, from netip.Addr, at time.Time, want Verdict, wantHost string) {
		t.Helper()
		got, host, _ := m.Match(v6, id, pkt, from, at)
		if got != want || host != wantHost {
			t.Errorf("%s: %v %q, want %v %q", what, got, host, want, wantHost)
		}
	}
	check("own request on a raw socket", false, 7, echo(t, false, false, 7, a, p), lo4, t0, Ignored, "")
	// Another program's ping, seen by a raw socket: not counted.
	check("other identifier", false, 7, echo(t, false, true, 8, a, p), lo4, t0, Ignored, "")
	check("other identifier, v6", true, 7, echo(t, true, true, 8, b, []byte("ping's own data")), lo6, t0, Ignored, "")
	check("other payload", false, 7, echo(t, false, true, 7, a, []byte("someone else....")), lo4, t0, Foreign, "")
	check("other sender", false, 7, echo(t, false, true, 7, a, p), netip.MustParseAddr("127.0.0.2"), t0, Foreign, "")
	check("unknown sequence", false, 7, echo(t, false, true, 7, 999, p), lo4, t0, Foreign, "")
	check("garbage", false, 7, []byte{0, 0, 1}, lo4, t0, Ignored, "")

	v, host, rtt := m.Match(false, 7, echo(t, false, true, 7, a, p), lo4, t0.Add(3*time.Millisecond))
	if v != Answer || host != "a" || rtt != 3*time.Millisecond {
		t.Errorf("reply to a: %v %q %v, want Answer a 3ms", v, host, rtt)
	}
	check("second reply to a", false, 7, echo(t, false, true, 7, a, p), lo4, t0, Duplicate, "")
	check("v6 reply to b", true, 9, echo(t, true, true, 9, b, p), lo6, t0, Answer, "b")

	if m.Pending() != 1 {
		t.Fatalf("pending %d, want 1 (c)", m.Pending())
	}
	if gone := m.Expire(t0.Add(time.Second), t0.Add(5*time.Second)); len(gone) != 1 || gone[0] != "c" {
		t.Fatalf("expired %v, want [c]", gone)
	}
	check("reply to c after the timeout", false, 7, echo(t, false, true, 7, c, p), lo4, t0.Add(6*time.Second), Late, "")
	check("second late reply to c", false, 7, echo(t, false, true, 7, c, p), lo4, t0.Add(6*time.Second), Duplicate, "")
	// Closed requests are forgotten after the keep time.
	m.Expire(t0, t0.Add(2*time.Minute))
	check("reply to a long forgotten request", false, 7, echo(t, false, true, 7, a, p), lo4, t0, Foreign, "")
}

// FuzzMatch feeds received bytes (outside data) to the matcher: whatever
// arrives, it must not panic, and only a reply built from a pending
// request can be an Answer.
func FuzzMatch(f *testing.F) {
	nonce := []byte("nonce-0123456789")
	f.Add(false, echo(f, false, true, 7, 1, nonce))
	f.Add(true, echo(f, true, true, 7, 1, nonce))
	f.Add(false, echo(f, false, false, 7, 1, nonce))
	f.Add(false, []byte{0, 0, 0, 0, 0, 7, 0, 1})
	f.Add(true, []byte{129})
	f.Add(false, []byte{})
	f.Fuzz(func(t *testing.T, v6 bool, b []byte) {
		t0 := time.Now()
		m := NewMatcher(nonce, time.Minute)
		from := lo4
		if v6 {
			from = lo6
		}
		seq := m.Next("h", from, t0)
		v, host, _ := m.Match(v6, 7, b, from, t0)
		if v == Answer && (host != "h" || m.Pending() != 0) {
			t.Fatalf("answer for %q, pending %d", host, m.Pending())
		}
		if v == Answer {
			msg, err := icmp.ParseMessage(map[bool]int{false: 1, true: 58}[v6], b)
			if err != nil || uint16(msg.Body.(*icmp.Echo).Seq) != seq {
				t.Fatalf("answer from a message that is not a reply to seq %d: %v", seq, err)
			}
		}
	})
}
