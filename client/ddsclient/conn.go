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
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/trustdir"
)

// ErrDisconnected wraps a failure caused by losing the daemon's socket.
// The mapping and the handles stay valid; Check or the next AddCx or
// DelCx reconnects.
var ErrDisconnected = errors.New("dds client: connection to the daemon lost")

// SocketPath is the daemon's socket the library uses when no path is
// given: $SUBAGENT_DDS_SOCKET, else $SUBAGENT_RUN_DIR/dds.sock, else the
// daemon's default run directory (config.defaultRunDir) for this user:
// /run/subagent for root, else $XDG_RUNTIME_DIR/subagent. Since a supplier
// cannot know the daemon's uid, an existing socket in a trusted directory
// (trustdir.Check) among those defaults wins, /run/subagent first
// (docs/DDS.md §5 q6). Never a fixed name in /tmp: another user could
// make it first.
func SocketPath() string {
	if p := os.Getenv("SUBAGENT_DDS_SOCKET"); p != "" {
		return p
	}
	if d := os.Getenv("SUBAGENT_RUN_DIR"); d != "" {
		return filepath.Join(d, "dds.sock")
	}
	dirs := []string{"/run/subagent"}
	if d := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) {
		dirs = append(dirs, filepath.Join(d, "subagent"))
	}
	for _, d := range dirs {
		fi, err := os.Stat(filepath.Join(d, "dds.sock"))
		if err == nil && fi.Mode()&os.ModeSocket != 0 && trustdir.Check(d) == nil {
			return filepath.Join(d, "dds.sock")
		}
	}
	def := dirs[len(dirs)-1] // the daemon's own default for our uid
	if os.Geteuid() == 0 {
		def = dirs[0]
	}
	return filepath.Join(def, "dds.sock")
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
