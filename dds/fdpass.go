package dds

import (
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// Descriptor passing (SCM_RIGHTS), shared by the server, the client
// library and their test doubles.

// WriteMessageFD writes m with fd attached (fd < 0: none). The descriptor
// travels with the first bytes; the rest of a long frame follows.
func WriteMessageFD(c *net.UnixConn, m Message, fd int, lim Limits) error {
	b, err := Marshal(m, lim)
	if err != nil {
		return err
	}
	if fd < 0 {
		_, err = c.Write(b)
		return err
	}
	n, _, err := c.WriteMsgUnix(b, unix.UnixRights(fd), nil)
	if err == nil && n < len(b) {
		_, err = c.Write(b[n:])
	}
	return err
}

// parseRights returns the descriptors in received ancillary data, and
// whether any may have been lost (truncated or unreadable control data).
func parseRights(oob []byte, flags int) (fds []int, lost bool) {
	lost = flags&unix.MSG_CTRUNC != 0
	if len(oob) == 0 {
		return nil, lost
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, true
	}
	for _, m := range msgs {
		if got, err := unix.ParseUnixRights(&m); err == nil {
			fds = append(fds, got...)
		}
	}
	return fds, lost
}

// RecvMessage reads one message and the descriptors that came with it,
// which the caller must close. A started frame must end within timeout.
func RecvMessage(c *net.UnixConn, lim Limits, timeout time.Duration) (Message, []int, error) {
	r := &fdReader{c: c, timeout: timeout}
	r.next(0)
	m, err := ReadMessage(r, lim)
	return m, r.fds, err
}
