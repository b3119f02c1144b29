package ddswire

import (
	"io"
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
	r := &FDReader{Conn: c, Timeout: timeout}
	r.Next(0)
	m, err := ReadMessage(r, lim)
	return m, r.FDs, err
}

// FDReader reads a stream and collects the SCM_RIGHTS descriptors that
// come with it, which its user must close (CloseFDs). Once the first byte
// of a frame has arrived the rest must come within Timeout.
type FDReader struct {
	Conn      *net.UnixConn
	Timeout   time.Duration
	FDs       []int // received so far
	Truncated bool  // control data was cut: a descriptor may be lost
	armed     bool
}

func (r *FDReader) Read(p []byte) (int, error) {
	oob := make([]byte, unix.CmsgSpace(4*4))
	n, oobn, flags, _, err := r.Conn.ReadMsgUnix(p, oob)
	fds, lost := parseRights(oob[:oobn], flags)
	r.FDs = append(r.FDs, fds...)
	r.Truncated = r.Truncated || lost
	if n == 0 && err == nil && len(p) > 0 {
		return 0, io.EOF
	}
	if n > 0 && !r.armed {
		r.armed = true
		_ = r.Conn.SetReadDeadline(time.Now().Add(r.Timeout))
	}
	return n, err
}

// Next prepares for a frame; a zero wait waits for its start forever.
func (r *FDReader) Next(wait time.Duration) {
	r.armed = false
	var d time.Time
	if wait > 0 {
		d = time.Now().Add(wait)
	}
	_ = r.Conn.SetReadDeadline(d)
}

// CloseFDs closes the received descriptors and forgets them.
func (r *FDReader) CloseFDs() {
	for _, fd := range r.FDs {
		_ = unix.Close(fd)
	}
	r.FDs, r.Truncated = nil, false
}
