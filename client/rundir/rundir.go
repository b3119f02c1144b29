// Package rundir is where the daemon's run directory is, in the one order
// the daemon, the CLI and every client library use (Go here; libSpmi's
// sock.c and libarm's conn.c follow it and their tests check them
// against Candidates):
//
//  1. $SUBAGENT_RUN_DIR alone, when set;
//  2. else the run directory a daemon of this user makes (Default:
//     /run/subagent for root, $XDG_RUNTIME_DIR/subagent for others),
//     then the system daemon's /run/subagent;
//  3. of those, the first where the socket a client needs exists in a
//     trusted directory (trustdir.Check); when none has it, the first, so
//     that an error names the daemon this user would start.
//
// Never a fixed name in /tmp, which another user could make first.
package rundir

import (
	"os"
	"path/filepath"

	"github.com/perfagent/subagent/client/trustdir"
)

// Env names the run directory, overriding every default.
const Env = "SUBAGENT_RUN_DIR"

// System is the run directory of the system daemon (the package's unit).
const System = "/run/subagent"

// DefaultFor is the run directory a daemon of uid makes when none is
// configured, given $XDG_RUNTIME_DIR: "" when there is none that only
// this user could have made.
func DefaultFor(uid int, xdgRuntimeDir string) string {
	if uid == 0 {
		return System
	}
	if filepath.IsAbs(xdgRuntimeDir) {
		return filepath.Join(xdgRuntimeDir, "subagent")
	}
	return ""
}

// Default is DefaultFor this process.
func Default() string { return DefaultFor(os.Geteuid(), os.Getenv("XDG_RUNTIME_DIR")) }

// Candidates lists the run directories in the order tried.
func Candidates() []string {
	if d := os.Getenv(Env); d != "" {
		return []string{d}
	}
	var out []string
	if d := Default(); d != "" {
		out = append(out, d)
	}
	if len(out) == 0 || out[0] != System {
		out = append(out, System)
	}
	return out
}

// Find is the run directory whose socket (a file name: subagent.sock,
// dds.sock, arm.sock) a client should use: the first candidate where it
// exists in a trusted directory, else the first candidate.
func Find(socket string) string { return find(Candidates(), socket) }

func find(c []string, socket string) string {
	for _, d := range c {
		fi, err := os.Lstat(filepath.Join(d, socket))
		if err == nil && fi.Mode()&os.ModeSocket != 0 && trustdir.Check(d) == nil {
			return d
		}
	}
	return c[0]
}
