package agentx

import (
	"io"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawConn reads and writes the session's socket with raw system calls, run
// inside the network poller's callbacks, which only wait when the socket is
// not ready.
//
// Why: a read or write through package syscall enters the scheduler's
// syscall state, and when every processor is idle — as it is between two
// requests of a master, which sends one GetNext per varbind — that wakes the
// runtime's monitor thread, which then polls every 20 µs until the process
// is idle again: wake-ups that cost more than the request itself. Raw calls
// on a non-blocking socket return at once, so the scheduler need not know.
type rawConn struct {
	net.Conn
	rc      syscall.RawConn
	timeout time.Duration // for a write that has to wait for room
}

// newRawConn wraps a Unix or TCP connection; any other conn (a test's
// pipe) is returned as it is.
func newRawConn(c net.Conn, timeout time.Duration) net.Conn {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return c
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	return &rawConn{Conn: c, rc: rc, timeout: timeout}
}

func rawRW(trap, fd uintptr, p []byte) (int, syscall.Errno) {
	for {
		n, _, e := unix.RawSyscall(trap, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		if e != unix.EINTR {
			return int(n), e
		}
	}
}

func (c *rawConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var (
		n     int
		errno syscall.Errno
	)
	err := c.rc.Read(func(fd uintptr) bool {
		n, errno = rawRW(unix.SYS_READ, fd, p)
		return errno != unix.EAGAIN
	})
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, os.NewSyscallError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write tries without a deadline first, the usual case for a PDU that fits
// the socket's buffer; only a write that has to wait for room is bounded
// by timeout.
func (c *rawConn) Write(p []byte) (int, error) {
	n := 0
	var errno syscall.Errno
	try := func(fd uintptr) bool {
		for n < len(p) {
			m, e := rawRW(unix.SYS_WRITE, fd, p[n:])
			if e == unix.EAGAIN {
				return false
			}
			if e != 0 {
				errno = e
				return true
			}
			n += m
		}
		return true
	}
	finished := false
	if err := c.rc.Control(func(fd uintptr) { finished = try(fd) }); err != nil {
		return n, err
	}
	if !finished {
		if err := c.Conn.SetWriteDeadline(time.Now().Add(c.timeout)); err != nil {
			return n, err
		}
		if err := c.rc.Write(try); err != nil {
			return n, err
		}
	}
	if errno != 0 {
		return n, os.NewSyscallError("write", errno)
	}
	return n, nil
}
