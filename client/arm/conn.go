package arm

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/client/armring"
	"github.com/perfagent/subagent/client/rundir"
	"github.com/perfagent/subagent/client/trustdir"
)

// SocketName is the daemon's ARM socket in its run directory.
const SocketName = "arm.sock"

// Sockets lists where the daemon's socket may be, in the order tried:
// the run directories of rundir.Candidates ($SUBAGENT_RUN_DIR alone when
// set; else this user's default, then the system daemon's).
func Sockets() []string {
	var out []string
	for _, d := range rundir.Candidates() {
		out = append(out, filepath.Join(d, SocketName))
	}
	return out
}

// ring is one daemon's file as this process mapped it. A mapping is never
// unmapped, since a handle started under a daemon that went away may still
// touch its counters; drop replaces it with private memory instead.
type ring struct {
	f       *armring.File
	conn    *net.UnixConn
	dropped atomic.Bool
}

// drop lets the daemon's file go once its registration has ended and what
// the daemon did not take is counted: the mapping becomes private zeroed
// memory at the same address, in one step, so a late Stop writes there
// harmlessly and the file is freed (the daemon counts it against this
// user while this process maps it). On failure the file stays mapped.
func (r *ring) drop() {
	if r.dropped.Swap(true) {
		return
	}
	mem := r.f.Bytes()
	unix.MmapPtr(-1, 0, unsafe.Pointer(unsafe.SliceData(mem)), uintptr(len(mem)),
		unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED)
}

// dial registers with the daemon at socket and maps the file it sends.
func dial(socket, prog string, timeout time.Duration) (*ring, error) {
	// Whoever can replace the socket in its directory would feed this
	// process a file of its choosing: trust the directory first.
	if err := trustdir.Check(filepath.Dir(socket)); err != nil {
		return nil, fmt.Errorf("arm: not connecting to %s: %w", socket, err)
	}
	c, err := net.DialTimeout("unix", socket, timeout)
	if err != nil {
		return nil, err
	}
	uc := c.(*net.UnixConn)
	r, err := hello(uc, prog, timeout)
	if err != nil {
		uc.Close()
		return nil, fmt.Errorf("arm: %s: %w", socket, err)
	}
	return r, nil
}

func hello(c *net.UnixConn, prog string, timeout time.Duration) (*ring, error) {
	c.SetDeadline(time.Now().Add(timeout))
	defer c.SetDeadline(time.Time{})
	if _, err := c.Write((&armring.Hello{Version: armring.Version, PID: int32(os.Getpid()), Prog: prog}).Marshal()); err != nil {
		return nil, err
	}
	buf := make([]byte, 8+armring.MaxFrame)
	oob := make([]byte, unix.CmsgSpace(4*4))
	n, oobn, _, _, err := c.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, err
	}
	fds := rights(oob[:oobn])
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	typ, body, err := armring.ReadFrame(&byteReader{b: buf[:n], c: c})
	if err != nil {
		return nil, err
	}
	if typ != armring.MsgWelcome {
		return nil, fmt.Errorf("reply type %d, want Welcome", typ)
	}
	w, err := armring.DecodeWelcome(body)
	if err != nil {
		return nil, err
	}
	if w.Status != 0 {
		return nil, &refusedError{msg: w.Msg}
	}
	if len(fds) != 1 {
		return nil, fmt.Errorf("the Welcome came with %d descriptors, want 1", len(fds))
	}
	f, err := mapFile(fds[0], w)
	if err != nil {
		return nil, err
	}
	return &ring{f: f, conn: c}, nil
}

func mapFile(fd int, w armring.Welcome) (*armring.File, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || uint64(st.Size) != w.FileLen() {
		return nil, fmt.Errorf("the daemon's file has mode %#o and %d bytes, want a regular file of %d", st.Mode, st.Size, w.FileLen())
	}
	mem, err := unix.Mmap(fd, 0, int(w.FileLen()), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	h, err := armring.DecodeHeader(mem, w.FileLen())
	if err == nil && (h.Geometry != w.Geometry || h.Gen != w.Gen) {
		err = fmt.Errorf("file header %+v does not match the Welcome %+v", h, w)
	}
	if err != nil {
		unix.Munmap(mem)
		return nil, err
	}
	return armring.NewFile(mem, w.Geometry)
}

func rights(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for _, m := range msgs {
		if got, err := unix.ParseUnixRights(&m); err == nil {
			fds = append(fds, got...)
		}
	}
	return fds
}

// refusedError is a daemon's refusal (a Welcome with a negative status):
// the agent measures nothing and asks again only after a while.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return "refused: " + e.msg }

// byteReader reads what ReadMsgUnix got, then the rest from the socket.
type byteReader struct {
	b []byte
	c *net.UnixConn
}

func (r *byteReader) Read(p []byte) (int, error) {
	if len(r.b) > 0 {
		n := copy(p, r.b)
		r.b = r.b[n:]
		return n, nil
	}
	return r.c.Read(p)
}
