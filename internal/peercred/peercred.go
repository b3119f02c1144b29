// Package peercred tells who is at the other end of a Unix socket
// (SO_PEERCRED) and whether allow lists of users and groups admit it. The
// daemon's supplier and ARM sockets both decide by it.
package peercred

import (
	"net"
	"slices"

	"golang.org/x/sys/unix"
)

// Of returns the credentials the kernel recorded for the peer of c.
func Of(c *net.UnixConn) (*unix.Ucred, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cr *unix.Ucred
	var cerr error
	if err := rc.Control(func(fd uintptr) {
		cr, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return nil, err
	}
	return cr, cerr
}

// Listed reports whether the peer's user is in uids or its group in gids.
func Listed(cr *unix.Ucred, uids, gids []uint32) bool {
	return slices.Contains(uids, cr.Uid) || slices.Contains(gids, cr.Gid)
}
