package responder

import (
	"net"
	"net/netip"
	"os"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawUDP reads and writes the responder's socket with raw system calls
// run inside the network poller's callbacks, which wait only when the
// socket is not ready.
//
// Why: a recvfrom or sendto through package syscall enters the
// scheduler's syscall state, and when every processor is idle, as between
// two requests of a walk, that wakes the runtime's monitor thread (sysmon)
// from its deep sleep to poll every 20 µs until the process is idle again:
// two more wake-ups of the daemon for each exchange, more than the answer
// costs (docs/FLEET.md, Cost). Raw calls on the non-blocking socket return
// at once, so the scheduler need not know.
type rawUDP struct {
	rc syscall.RawConn
	// The last request's source, as the kernel gave it: the response
	// goes back to it unchanged.
	sa    unix.RawSockaddrAny
	saLen uint32
	// The poller's callbacks, bound once, and what they work on: a
	// closure made per call would be an allocation per exchange.
	recv, send func(fd uintptr) bool
	buf        []byte
	n          uintptr
	errno      syscall.Errno
}

func newRawUDP(c *net.UDPConn) (*rawUDP, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	u := &rawUDP{rc: rc}
	u.recv, u.send = u.recvfrom, u.sendto
	return u, nil
}

// read receives one datagram into buf, waiting in the poller while none is
// queued; it returns its length and source.
func (u *rawUDP) read(buf []byte) (int, netip.AddrPort, error) {
	u.buf = buf
	err := u.rc.Read(u.recv)
	u.buf = nil
	if err != nil {
		return 0, netip.AddrPort{}, err
	}
	if u.errno != 0 {
		return 0, netip.AddrPort{}, os.NewSyscallError("recvfrom", u.errno)
	}
	return int(u.n), u.from(), nil
}

// recvfrom is read's callback: false when nothing is queued.
func (u *rawUDP) recvfrom(fd uintptr) bool {
	for {
		u.saLen = uint32(unsafe.Sizeof(u.sa))
		u.n, _, u.errno = unix.RawSyscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&u.buf[0])), uintptr(len(u.buf)),
			0, uintptr(unsafe.Pointer(&u.sa)), uintptr(unsafe.Pointer(&u.saLen)))
		if u.errno != unix.EINTR {
			return u.errno != unix.EAGAIN
		}
	}
}

// from is the source of the last datagram read, as net.UDPConn's
// ReadFromUDPAddrPort gives it (an IPv6 socket's IPv4 peers as
// IPv4-mapped addresses), except that a scope is named by its interface
// index, not its name.
func (u *rawUDP) from() netip.AddrPort {
	switch u.sa.Addr.Family {
	case unix.AF_INET:
		sa := (*unix.RawSockaddrInet4)(unsafe.Pointer(&u.sa))
		return netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), port(sa.Port))
	case unix.AF_INET6:
		sa := (*unix.RawSockaddrInet6)(unsafe.Pointer(&u.sa))
		a := netip.AddrFrom16(sa.Addr)
		if sa.Scope_id != 0 {
			a = a.WithZone(strconv.FormatUint(uint64(sa.Scope_id), 10))
		}
		return netip.AddrPortFrom(a, port(sa.Port))
	}
	return netip.AddrPort{}
}

// port reads a sockaddr's port, in network byte order.
func port(p uint16) uint16 {
	b := (*[2]byte)(unsafe.Pointer(&p))
	return uint16(b[0])<<8 | uint16(b[1])
}

// reply sends p to the source of the last datagram read.
func (u *rawUDP) reply(p []byte) error {
	u.buf = p
	err := u.rc.Write(u.send)
	u.buf = nil
	if err != nil {
		return err
	}
	if u.errno != 0 {
		return os.NewSyscallError("sendto", u.errno)
	}
	return nil
}

// sendto is reply's callback: false when the socket has no room.
func (u *rawUDP) sendto(fd uintptr) bool {
	for {
		_, _, u.errno = unix.RawSyscall6(unix.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&u.buf[0])), uintptr(len(u.buf)),
			0, uintptr(unsafe.Pointer(&u.sa)), uintptr(u.saLen))
		if u.errno != unix.EINTR {
			return u.errno != unix.EAGAIN
		}
	}
}
