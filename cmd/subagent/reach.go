package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/client/trustdir"
)

// noDaemon tells a failure to reach the control socket that means no
// daemon runs there: no run directory or socket (ENOENT), or a socket left
// by one that stopped (ECONNREFUSED). Anything else (permission denied, a
// directory another user could have made) is a daemon this user cannot
// ask, which reading the host instead would hide.
func noDaemon(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED)
}

// daemonError says why the daemon at runDir cannot be asked, and what to
// do about it.
func daemonError(runDir string, err error) error {
	sock := spmiwire.SocketPath(runDir)
	hint := "the run directory must belong to root or the daemon's user and be closed to others (docs/SECURITY.md); " +
		"if the daemon uses another one, name it with --run-dir or SUBAGENT_RUN_DIR"
	if errors.Is(err, fs.ErrPermission) {
		hint = permissionHint(runDir, sock)
		if own := ownDaemon(); own != "" {
			hint = fmt.Sprintf("a daemon of yours serves %s: set SUBAGENT_RUN_DIR=%s (or --run-dir) to ask it; otherwise %s",
				spmiwire.SocketPath(own), own, hint)
		} else {
			hint += "; to ask a daemon of your own, set SUBAGENT_RUN_DIR (or --run-dir) to its run directory, which its log names"
		}
	}
	// The hint on a line of its own, as main prints the error.
	return fmt.Errorf("cannot ask the daemon at %s: %w\nsubagent: %s", sock, err, hint)
}

// permissionHint tells who the socket (or its directory) lets in, from its
// owner, group and mode, and how an admin lets this user in.
func permissionHint(runDir, sock string) string {
	uid := os.Getuid()
	allow := fmt.Sprintf("to list your uid %d in control.allow_uids with control.mode \"0666\"", uid)
	fi, err := os.Stat(sock)
	if err != nil {
		return fmt.Sprintf("the run directory %s is closed to you: ask an admin to add you to its group, or %s; docs/SECURITY.md", runDir, allow)
	}
	gid := fi.Sys().(*syscall.Stat_t).Gid
	if gid == 0 {
		return fmt.Sprintf("the socket (group root, mode %04o) lets in root and the daemon's user only: ask an admin to set control.group to a group of yours, or %s; docs/SECURITY.md",
			fi.Mode().Perm(), allow)
	}
	group := strconv.FormatUint(uint64(gid), 10)
	if g, err := user.LookupGroupId(group); err == nil {
		group = g.Name
	}
	return fmt.Sprintf("the socket (group %s, mode %04o) lets in root, the daemon's user and members of group %s: ask an admin to add you to group %s, or %s; docs/SECURITY.md",
		group, fi.Mode().Perm(), group, group, allow)
}

// ownDaemon is the private run directory (subagent-run-* in the temporary
// directory, made by a daemon of a user without XDG_RUNTIME_DIR) of a
// daemon of this user that answers, or "": such a user is better told to
// name it than to ask an admin for the system daemon's socket.
func ownDaemon() string {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "subagent-run-*"))
	for _, d := range dirs[:min(len(dirs), 32)] {
		fi, err := os.Stat(d)
		if err != nil || fi.Sys().(*syscall.Stat_t).Uid != uint32(os.Geteuid()) || trustdir.Check(d) != nil {
			continue
		}
		if c, err := net.DialTimeout("unix", spmiwire.SocketPath(d), time.Second); err == nil {
			c.Close()
			return d
		}
	}
	return ""
}
