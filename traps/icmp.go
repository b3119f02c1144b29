package traps

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// An ICMP error (port unreachable, ...) of a plain connected UDP socket
// fails the socket's NEXT write or read, whichever notification that
// carries. With IP_RECVERR the kernel also queues each ICMP error with the
// start of the datagram that caused it (the error queue, MSG_ERRQUEUE),
// which tells the notification it belongs to. sock drains that queue
// before each write, so a pending error never fails a later notification
// (a write that one arriving just before fails is made again), and
// attributes each error by the datagram's bytes: to the one unconfirmed
// trap whose datagram starts so, or to none when none or several do.

const (
	// unconfirmedFor is how long a trap's datagram waits for an ICMP
	// error; one arriving later is attributed to no notification.
	unconfirmedFor = 10 * time.Second
	maxUnconfirmed = 256  // datagrams remembered at most, the oldest forgotten first
	headLen        = 1500 // octets of a datagram remembered to match
)

// lost is a trap found lost after it was sent: an ICMP error came back.
type lost struct {
	n   Notification
	err error
}

// dgram is a datagram written, remembered for matching.
type dgram struct {
	head  []byte
	n     *Notification
	at    time.Time
	trap  bool // unconfirmed: an ICMP error makes its notification lost
	taken bool // its ICMP error was attributed
}

// sock is a destination's connected UDP socket with IP_RECVERR, as the
// gosnmp session's Conn. Only the destination's worker uses it.
type sock struct {
	*net.UDPConn
	raw syscall.RawConn
	now func() time.Time

	cur    *Notification // what the writes carry now (conn.send)
	trap   bool          // cur is a trap (else an inform, which waits)
	ownErr error         // an ICMP error of cur's inform datagrams
	sent   []dgram       // oldest first
	lost   []lost        // found, not yet taken by the worker
	buf    []byte        // drain's, for the datagram quoted
	oob    []byte        // drain's, for the extended error
}

// recvErrControl is the dialer's Control: IP_RECVERR (IPV6_RECVERR).
func recvErrControl(network, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		if network == "udp6" {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_RECVERR, 1)
		} else {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVERR, 1)
		}
	})
	if err != nil {
		return err
	}
	if serr != nil {
		return fmt.Errorf("IP_RECVERR: %w", serr)
	}
	return nil
}

func newSock(c net.Conn) (*sock, error) {
	u, ok := c.(*net.UDPConn)
	if !ok {
		return nil, fmt.Errorf("traps: %T is not a UDP socket", c)
	}
	raw, err := u.SyscallConn()
	if err != nil {
		return nil, err
	}
	return &sock{UDPConn: u, raw: raw, now: time.Now, buf: make([]byte, headLen), oob: make([]byte, 512)}, nil
}

// begin says what the next writes carry (each write first drains the
// errors of the earlier ones).
func (s *sock) begin(n *Notification, trap bool) {
	s.cur, s.trap, s.ownErr = n, trap, nil
}

// Write writes one datagram. An earlier datagram's ICMP error arriving
// since the last drain fails the write without sending it (the socket's
// pending error): then the error is attributed and the write made again.
// The first failure is always tried again, as the kernel queues an error
// a moment before it makes it pending, so a drain may take the one and
// leave the other; a failure with no new error queued is the write's own.
func (s *sock) Write(b []byte) (int, error) {
	s.drain()
	n, err := s.UDPConn.Write(b)
	for i := 0; err != nil && i < 3; i++ {
		if s.drain() == 0 && i > 0 {
			break
		}
		n, err = s.UDPConn.Write(b)
	}
	if err == nil {
		s.remember(b)
	}
	return n, err
}

// Read reads a response (informs). An ICMP error fails it only when it
// is of this inform's datagrams.
func (s *sock) Read(b []byte) (int, error) {
	for i := 0; ; i++ {
		n, err := s.UDPConn.Read(b)
		var errno syscall.Errno
		if err == nil || !errors.As(err, &errno) {
			return n, err
		}
		// Read on after another notification's error (now attributed),
		// and once after an error with none queued (as in Write); the
		// deadline bounds it, and each turn takes a queued error.
		if got := s.drain(); s.ownErr != nil || got == 0 && i > 0 || i >= maxUnconfirmed {
			return n, err
		}
	}
}

func (s *sock) remember(b []byte) {
	t := s.now()
	s.expire(t)
	if len(s.sent) >= maxUnconfirmed {
		s.sent = s.sent[1:]
	}
	s.sent = append(s.sent, dgram{head: bytes.Clone(b[:min(len(b), headLen)]), n: s.cur, at: t, trap: s.trap})
}

// expire forgets the datagrams too old to be matched.
func (s *sock) expire(now time.Time) {
	i := 0
	for i < len(s.sent) && (s.sent[i].taken || now.Sub(s.sent[i].at) > unconfirmedFor) {
		i++
	}
	s.sent = s.sent[i:]
}

// waiting tells whether traps sent may still get an ICMP error.
func (s *sock) waiting() bool {
	s.expire(s.now())
	for _, d := range s.sent {
		if d.trap && !d.taken {
			return true
		}
	}
	return false
}

// takeLost returns the traps found lost, draining the error queue first
// if drain.
func (s *sock) takeLost(drain bool) []lost {
	if drain {
		s.drain()
	}
	l := s.lost
	s.lost = nil
	return l
}

// drain reads the error queue without waiting, attributes each ICMP error
// and returns how many it read.
func (s *sock) drain() int {
	count := 0
	buf, oob := s.buf, s.oob
	for range 1000 { // the queue is bounded by the socket's receive buffer
		var n, oobn int
		var rerr error
		err := s.raw.Control(func(fd uintptr) {
			n, oobn, _, _, rerr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_ERRQUEUE|unix.MSG_DONTWAIT)
		})
		if err != nil || rerr != nil {
			return count // EAGAIN: empty
		}
		errno, from, ok := extendedErr(oob[:oobn])
		if !ok {
			continue // a local error (EMSGSIZE, ...): the write itself said it
		}
		count++
		s.attribute(buf[:n], fmt.Errorf("%w (ICMP error from %s after the send)", errno, from))
	}
	return count
}

// attribute gives err to the one remembered datagram that payload (the
// start of the datagram the ICMP error quotes) matches; to none when
// none or several do.
func (s *sock) attribute(payload []byte, err error) {
	match := -1
	for i, d := range s.sent {
		k := min(len(payload), len(d.head))
		if k == 0 || !bytes.Equal(payload[:k], d.head[:k]) {
			continue
		}
		if match >= 0 {
			return // ambiguous
		}
		match = i
	}
	if match < 0 || s.sent[match].taken {
		return
	}
	d := &s.sent[match]
	d.taken = true
	switch {
	case d.trap:
		s.lost = append(s.lost, lost{n: *d.n, err: err})
	case d.n == s.cur:
		s.ownErr = err
	}
}

// extendedErr finds the ICMP error (not a local one) in a MSG_ERRQUEUE
// control message: its errno, and the address of the node that sent it.
func extendedErr(oob []byte) (syscall.Errno, string, bool) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return 0, "", false
	}
	for _, m := range msgs {
		v4 := m.Header.Level == unix.SOL_IP && m.Header.Type == unix.IP_RECVERR
		v6 := m.Header.Level == unix.SOL_IPV6 && m.Header.Type == unix.IPV6_RECVERR
		const size = 16 // struct sock_extended_err
		d := m.Data
		if !v4 && !v6 || len(d) < size {
			continue
		}
		if origin := d[4]; origin != unix.SO_EE_ORIGIN_ICMP && origin != unix.SO_EE_ORIGIN_ICMP6 {
			return 0, "", false
		}
		return syscall.Errno(binary.NativeEndian.Uint32(d[0:4])), offender(d[size:]), true
	}
	return 0, "", false
}

// offender is the address of SO_EE_OFFENDER: a sockaddr_in or _in6.
func offender(b []byte) string {
	if len(b) < 2 {
		return "?"
	}
	switch binary.NativeEndian.Uint16(b[0:2]) {
	case unix.AF_INET:
		if len(b) >= 8 {
			return net.IP(b[4:8]).String()
		}
	case unix.AF_INET6:
		if len(b) >= 24 {
			return net.IP(b[8:24]).String()
		}
	}
	return "?"
}
