package rtimelan

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// Opener opens an ICMP endpoint; icmp.ListenPacket is the real one. Tests
// pass one that opens the socket inside a network namespace.
type Opener func(network, address string) (*icmp.PacketConn, error)

// Socket is one open ICMP endpoint, IPv4 or IPv6.
type Socket struct {
	pc *icmp.PacketConn
	// V6 tells which ICMP the socket speaks.
	V6 bool
	// Dgram marks an unprivileged datagram socket. On those the kernel
	// writes the socket's own identifier (its "port") into every request
	// and delivers only the replies that carry it.
	Dgram bool
	// ID is the identifier the replies to our requests carry.
	ID uint16
}

// Pinger sends echo requests and receives replies on up to two sockets.
type Pinger struct {
	V4, V6 *Socket
}

// OpenPinger opens an IPv4 and an IPv6 ICMP socket: an unprivileged
// datagram socket where net.ipv4.ping_group_range allows it, else a raw
// one (root or CAP_NET_RAW). It fails only when no IPv4 socket can be
// opened; a missing IPv6 socket is returned as v6err, with the pinger.
func OpenPinger(open Opener) (p *Pinger, v6err error, err error) {
	if open == nil {
		open = icmp.ListenPacket
	}
	p = &Pinger{}
	p.V4, err = openSocket(open, false)
	if err != nil {
		return nil, nil, err
	}
	p.V6, v6err = openSocket(open, true)
	return p, v6err, nil
}

func openSocket(open Opener, v6 bool) (*Socket, error) {
	dgram, raw, any := "udp4", "ip4:icmp", "0.0.0.0"
	if v6 {
		dgram, raw, any = "udp6", "ip6:ipv6-icmp", "::"
	}
	pc, derr := open(dgram, any)
	if derr == nil {
		port := 0
		if a, ok := pc.LocalAddr().(*net.UDPAddr); ok {
			port = a.Port
		}
		return &Socket{pc: pc, V6: v6, Dgram: true, ID: uint16(port)}, nil
	}
	pc, rerr := open(raw, any)
	if rerr == nil {
		// Every raw socket sees every echo reply: a random identifier
		// (and the payload) tell ours from other pingers'.
		s := &Socket{pc: pc, V6: v6, ID: uint16(rand.Uint32())}
		s.filter()
		return s, nil
	}
	fam := "IPv4"
	if v6 {
		fam = "IPv6"
	}
	if errors.Is(derr, syscall.EAFNOSUPPORT) && errors.Is(rerr, syscall.EAFNOSUPPORT) {
		return nil, fmt.Errorf("no %s on this host", fam)
	}
	return nil, fmt.Errorf("no %s ICMP socket: an unprivileged one (%v) needs the group id %d within sysctl net.ipv4.ping_group_range (now %q), a raw one (%v) needs root or the capability CAP_NET_RAW",
		fam, derr, os.Getegid(), pingGroupRange(), rerr)
}

// filter keeps everything but echo replies out of a raw socket, where the
// kernel would otherwise also deliver our own requests to loopback
// addresses and every other ICMP message. It only saves work: Match
// ignores those anyway.
func (s *Socket) filter() {
	if s.V6 {
		var f ipv6.ICMPFilter
		f.SetAll(true)
		f.Accept(ipv6.ICMPTypeEchoReply)
		_ = s.pc.IPv6PacketConn().SetICMPFilter(&f)
		return
	}
	var f ipv4.ICMPFilter
	f.SetAll(true)
	f.Accept(ipv4.ICMPTypeEchoReply)
	_ = s.pc.IPv4PacketConn().SetICMPFilter(&f)
}

func pingGroupRange() string {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ping_group_range")
	if err != nil {
		return "unreadable"
	}
	return strings.Join(strings.Fields(string(b)), " ")
}

// socket returns the socket for addr's family, or nil.
func (p *Pinger) socket(addr netip.Addr) *Socket {
	if addr.Unmap().Is4() {
		return p.V4
	}
	return p.V6
}

// Has tells whether the pinger can reach addresses of addr's family.
func (p *Pinger) Has(addr netip.Addr) bool { return p.socket(addr) != nil }

// ID is the identifier replies on the v6 (or v4) socket carry.
func (p *Pinger) ID(v6 bool) uint16 {
	if s := p.V4; !v6 && s != nil {
		return s.ID
	}
	if s := p.V6; v6 && s != nil {
		return s.ID
	}
	return 0
}

// Send sends one echo request with seq and data to addr.
func (p *Pinger) Send(addr netip.Addr, seq uint16, data []byte) error {
	addr = addr.Unmap()
	s := p.socket(addr)
	if s == nil {
		return fmt.Errorf("no ICMP socket for %s", addr)
	}
	typ := icmp.Type(ipv4.ICMPTypeEcho)
	if s.V6 {
		typ = ipv6.ICMPTypeEchoRequest
	}
	// The kernel computes the ICMPv6 checksum; on a datagram socket it
	// also replaces the identifier with the socket's own.
	msg := icmp.Message{Type: typ, Body: &icmp.Echo{ID: int(s.ID), Seq: int(seq), Data: data}}
	b, err := msg.Marshal(nil)
	if err != nil {
		return err
	}
	var dst net.Addr = &net.IPAddr{IP: addr.AsSlice(), Zone: addr.Zone()}
	if s.Dgram {
		dst = &net.UDPAddr{IP: addr.AsSlice(), Zone: addr.Zone()}
	}
	_ = s.pc.SetWriteDeadline(time.Now().Add(time.Second))
	_, err = s.pc.WriteTo(b, dst)
	return err
}

// Receive calls fn with every packet s receives until s is closed.
func (s *Socket) Receive(fn func(v6 bool, b []byte, from netip.Addr, at time.Time)) {
	buf := make([]byte, 1500)
	for {
		n, peer, err := s.pc.ReadFrom(buf)
		at := time.Now()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// A transient error (an ICMP error queued on the socket):
			// pause so that a persistent one cannot spin.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		var ip net.IP
		switch a := peer.(type) {
		case *net.IPAddr:
			ip = a.IP
		case *net.UDPAddr:
			ip = a.IP
		}
		from, ok := netip.AddrFromSlice(ip)
		if !ok {
			continue
		}
		fn(s.V6, buf[:n], from.Unmap(), at)
	}
}

// Receive calls fn with every packet of both sockets until Close.
func (p *Pinger) Receive(fn func(v6 bool, b []byte, from netip.Addr, at time.Time)) {
	var wg sync.WaitGroup
	for _, s := range []*Socket{p.V4, p.V6} {
		if s != nil {
			wg.Add(1)
			go func() { defer wg.Done(); s.Receive(fn) }()
		}
	}
	wg.Wait()
}

// Close closes the sockets; Receive returns.
func (p *Pinger) Close() error {
	var errs []error
	for _, s := range []*Socket{p.V4, p.V6} {
		if s != nil {
			errs = append(errs, s.pc.Close())
		}
	}
	return errors.Join(errs...)
}
