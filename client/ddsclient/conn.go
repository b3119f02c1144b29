package ddsclient

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/rundir"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/trustdir"
)

// ErrDisconnected wraps a failure caused by losing the daemon's socket.
// The mapping and the handles stay valid; Check or the next AddCx or
// DelCx reconnects.
var ErrDisconnected = errors.New("dds client: connection to the daemon lost")

// SocketPath is the daemon's socket the library uses when no path is
// given: $SUBAGENT_DDS_SOCKET, else dds.sock in the run directory
// rundir.Find gives ($SUBAGENT_RUN_DIR alone when set; else the first of
// this user's default and the system daemon's /run/subagent that holds
// the socket in a trusted directory, else this user's default). Never a
// fixed name in /tmp: another user could make it first.
func SocketPath() string {
	if p := os.Getenv("SUBAGENT_DDS_SOCKET"); p != "" {
		return p
	}
	return filepath.Join(rundir.Find("dds.sock"), "dds.sock")
}

// conn is one registration connection: strictly request and reply.
type conn struct {
	c   *net.UnixConn
	lim ddswire.Limits
}

func dial(path string) (*conn, error) {
	// Whoever can replace the socket in its directory would receive the
	// shared file's descriptor: trust the directory first (trustdir.Check).
	if err := trustdir.Check(filepath.Dir(path)); err != nil {
		if errors.Is(err, fs.ErrNotExist) { // no daemon there (yet)
			return nil, fmt.Errorf("%w: %v", ErrDisconnected, err)
		}
		return nil, fmt.Errorf("dds client: not connecting to %s: %w", path, err)
	}
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDisconnected, err)
	}
	return &conn{c: c}, nil
}

// roundTrip sends m (with fd as SCM_RIGHTS when fd >= 0) and reads the
// reply. A daemon error is the Reply's *spmierr.Error; an I/O failure wraps
// ErrDisconnected.
func (c *conn) roundTrip(m ddswire.Message, fd int) (uint64, error) {
	if err := ddswire.WriteMessageFD(c.c, m, fd, c.lim); err != nil {
		// A message we cannot encode is ours to fix, not a lost daemon.
		if se := (*spmierr.Error)(nil); errors.As(err, &se) {
			return 0, err
		}
		return 0, fmt.Errorf("%w: %s: %v", ErrDisconnected, m.Type(), err)
	}
	r, err := ddswire.ReadMessage(c.c, c.lim)
	if err != nil {
		return 0, fmt.Errorf("%w: %s reply: %v", ErrDisconnected, m.Type(), err)
	}
	rep, ok := r.(*ddswire.Reply)
	if !ok || rep.To != m.Type() {
		return 0, fmt.Errorf("%w: %s answered by %s", ErrDisconnected, m.Type(), r.Type())
	}
	return rep.Value, rep.Err()
}

// closed reports whether the daemon closed its end, without blocking.
// The protocol never sends anything unasked, so any readable byte or EOF
// means the connection is over.
func (c *conn) closed() bool {
	rc, err := c.c.SyscallConn()
	if err != nil {
		return true
	}
	dead := false
	_ = rc.Read(func(fd uintptr) bool {
		var b [1]byte
		n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		dead = n >= 0 && err == nil || err != nil && err != unix.EAGAIN
		return true
	})
	return dead
}

func (c *conn) close() error { return c.c.Close() }
