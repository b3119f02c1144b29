// Package sdnotify tells systemd about the daemon's state (sd_notify(3)):
// READY=1 once it serves, RELOADING=1 and READY=1 around a reload,
// STOPPING=1 at shutdown, so that a unit with Type=notify orders its
// dependents after the moment the daemon answers and `systemctl reload`
// waits for the reload to finish.
//
// It is written here rather than imported: the protocol is one datagram on
// a Unix socket, and the usual library (coreos/go-systemd) is not among the
// project's dependencies.
package sdnotify

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Socket is the environment variable in which systemd names its socket.
const Socket = "NOTIFY_SOCKET"

// Messages of the protocol the daemon sends.
const (
	Ready     = "READY=1"
	Reloading = "RELOADING=1"
	Stopping  = "STOPPING=1"
)

// Notify sends state (newline-separated assignments) to the socket named
// by $NOTIFY_SOCKET: a path, or an abstract name written with a leading
// "@" (Go maps it to the leading NUL of the abstract namespace). Without
// the variable it does nothing and returns false: the daemon was not
// started by systemd as Type=notify.
func Notify(state string) (sent bool, err error) {
	name := os.Getenv(Socket)
	if name == "" {
		return false, nil
	}
	if name[0] != '/' && name[0] != '@' {
		// systemd also passes vsock: addresses, to daemons inside VMs only.
		return false, fmt.Errorf("sdnotify: unsupported %s %q", Socket, name)
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		return false, fmt.Errorf("sdnotify: %w", err)
	}
	defer c.Close()
	// systemd reads at once; a full queue must not hang the daemon.
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte(state)); err != nil {
		return false, fmt.Errorf("sdnotify: %w", err)
	}
	return true, nil
}

// ReloadingNow is the message that starts a reload: RELOADING=1 with the
// CLOCK_MONOTONIC time in microseconds, which systemd 253 and later match
// against the reload they asked for; older versions ignore the field.
func ReloadingNow() string {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return Reloading
	}
	return Reloading + "\nMONOTONIC_USEC=" + strconv.FormatInt(ts.Nano()/1000, 10)
}
