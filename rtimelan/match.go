package rtimelan

import (
	"bytes"
	"net/netip"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// Protocol numbers icmp.ParseMessage takes.
const (
	protoICMP   = 1
	protoICMPv6 = 58
)

// pending is a request sent and not yet answered or given up.
type pending struct {
	host string
	addr netip.Addr
	sent time.Time
}

// closed remembers a request that was answered or timed out, so that a
// second reply is told apart from a stray one.
type closed struct {
	answered bool
	at       time.Time
}

// Verdict is what a received packet turned out to be.
type Verdict int

const (
	// Ignored: not an echo reply (our own request on a raw socket,
	// errors), or one with another identifier: a raw socket sees every
	// other program's pings, which are none of our business.
	Ignored   Verdict = iota
	Answer            // the first reply to a pending request
	Late              // a reply to a request already given up
	Duplicate         // a second reply to an answered request
	// Foreign: a reply with our identifier that answers none of our
	// requests (other payload, sender or sequence number).
	Foreign
)

// Matcher pairs echo replies with requests by identifier, sequence
// number, payload and sender. It is not safe for concurrent use.
type Matcher struct {
	nonce   []byte // payload of every request: tells our replies from others'
	seq     uint16
	pending map[uint16]pending
	closed  map[uint16]closed
	keep    time.Duration // how long closed requests are remembered
}

// NewMatcher returns a matcher whose requests carry nonce.
func NewMatcher(nonce []byte, keep time.Duration) *Matcher {
	return &Matcher{nonce: bytes.Clone(nonce), pending: map[uint16]pending{}, closed: map[uint16]closed{}, keep: keep}
}

// Payload is the data every request carries.
func (m *Matcher) Payload() []byte { return m.nonce }

// Next registers a request to host at addr sent at t and returns its
// sequence number. Sequence numbers wrap after 65536 requests, which the
// limits on rate and timeout keep from meeting a pending one.
func (m *Matcher) Next(host string, addr netip.Addr, t time.Time) uint16 {
	m.seq++
	delete(m.closed, m.seq)
	m.pending[m.seq] = pending{host: host, addr: addr, sent: t}
	return m.seq
}

// Forget drops a request that could not be sent.
func (m *Matcher) Forget(seq uint16) { delete(m.pending, seq) }

// Expire gives up the requests sent before deadline and returns their
// hosts; it also forgets closed requests older than the keep time.
func (m *Matcher) Expire(deadline, now time.Time) []string {
	var out []string
	for seq, p := range m.pending {
		if p.sent.Before(deadline) {
			delete(m.pending, seq)
			m.closed[seq] = closed{at: now}
			out = append(out, p.host)
		}
	}
	for seq, c := range m.closed {
		if now.Sub(c.at) > m.keep {
			delete(m.closed, seq)
		}
	}
	return out
}

// Pending is the number of requests waiting for a reply.
func (m *Matcher) Pending() int { return len(m.pending) }

// Match classifies the ICMP message b received at t from from on a socket
// whose requests carry identifier id. v6 says which ICMP it is. For an
// Answer it returns the host and the round trip.
func (m *Matcher) Match(v6 bool, id uint16, b []byte, from netip.Addr, t time.Time) (Verdict, string, time.Duration) {
	proto, reply := protoICMP, icmp.Type(ipv4.ICMPTypeEchoReply)
	if v6 {
		proto, reply = protoICMPv6, ipv6.ICMPTypeEchoReply
	}
	msg, err := icmp.ParseMessage(proto, b)
	if err != nil || msg.Type != reply {
		return Ignored, "", 0
	}
	echo, ok := msg.Body.(*icmp.Echo)
	if !ok || uint16(echo.ID) != id {
		return Ignored, "", 0
	}
	if !bytes.Equal(echo.Data, m.nonce) {
		return Foreign, "", 0
	}
	seq := uint16(echo.Seq)
	if p, ok := m.pending[seq]; ok {
		if p.addr != from.Unmap().WithZone("") && p.addr != from {
			return Foreign, "", 0
		}
		delete(m.pending, seq)
		m.closed[seq] = closed{answered: true, at: t}
		return Answer, p.host, max(t.Sub(p.sent), 0)
	}
	if c, ok := m.closed[seq]; ok {
		if c.answered {
			return Duplicate, "", 0
		}
		m.closed[seq] = closed{answered: true, at: c.at} // a second late reply is a duplicate
		return Late, "", 0
	}
	return Foreign, "", 0
}
