package unixsock

import (
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Peer is who connected, as the kernel recorded it when the peer called
// connect: nothing the peer says can change it.
type Peer struct {
	UID, GID uint32
	PID      int32
	Groups   []uint32 // supplementary groups (SO_PEERGROUPS)
}

// InGroup reports whether gid is the peer's primary or a supplementary group.
func (p Peer) InGroup(gid uint32) bool { return p.GID == gid || slices.Contains(p.Groups, gid) }

// PeerOf reads the credentials of c's peer.
func PeerOf(c *net.UnixConn) (Peer, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return Peer{}, err
	}
	var p Peer
	var cerr error
	if err := rc.Control(func(fd uintptr) {
		var cr *unix.Ucred
		cr, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		if cerr != nil {
			return
		}
		p = Peer{UID: cr.Uid, GID: cr.Gid, PID: cr.Pid}
		p.Groups, cerr = peerGroups(int(fd))
	}); err != nil {
		return Peer{}, err
	}
	if cerr != nil {
		return Peer{}, fmt.Errorf("peer credentials: %w", cerr)
	}
	return p, nil
}

// peerGroups reads SO_PEERGROUPS (Linux 4.13). x/sys/unix has no wrapper
// for this variable-length option, so the system call is made here. Unlike
// the peer's /proc status it is the set at connect time, immune to PID reuse.
func peerGroups(fd int) ([]uint32, error) {
	n := 32
	for range 4 {
		buf := make([]uint32, n)
		size := uint32(4 * n)
		_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_SOCKET, unix.SO_PEERGROUPS,
			uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&size)), 0)
		switch {
		case e == 0:
			return buf[:size/4], nil
		case e == unix.ERANGE && int(size/4) > n && size/4 <= 65536:
			n = int(size / 4)
		default:
			return nil, fmt.Errorf("SO_PEERGROUPS: %w", e)
		}
	}
	return nil, errors.New("SO_PEERGROUPS: group list keeps growing")
}

// Allow is an allow list of users and groups. Everyone admits any peer.
type Allow struct {
	UIDs, GIDs []uint32
	Everyone   bool
}

// Admits reports whether the list names the peer's user or one of its groups.
func (a Allow) Admits(p Peer) bool {
	if a.Everyone || slices.Contains(a.UIDs, p.UID) {
		return true
	}
	for _, g := range a.GIDs {
		if p.InGroup(g) {
			return true
		}
	}
	return false
}

// Owners is the allow list every socket starts from: root and the
// daemon's own user. Configured lists are added to it, never replace it,
// so that listing one more user cannot lock out the operator.
func Owners() Allow { return Allow{UIDs: []uint32{0, uint32(os.Geteuid())}} }

// With returns a plus the given ids.
func (a Allow) With(uids, gids []uint32) Allow {
	return Allow{UIDs: append(slices.Clone(a.UIDs), uids...), GIDs: append(slices.Clone(a.GIDs), gids...), Everyone: a.Everyone}
}
