package daemon

import (
	"errors"
	"fmt"
	"log/slog"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/client/trustdir"
)

// lockStateDir takes the state directory's lock, held until release: an
// flock on the directory itself, so nothing is written for it and the
// kernel drops it when the daemon dies. Another daemon on the same state
// directory (with a run directory of its own, so the control socket did
// not refuse it) is refused here, before it reads or writes any state.
func lockStateDir(dir string) (release func(), err error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("state directory %s: %w", dir, err)
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		unix.Close(fd)
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("state directory %s is used by another daemon (it holds the directory's lock); stop it, or choose another with --state-dir", dir)
		}
		return nil, fmt.Errorf("state directory %s: lock: %w", dir, err)
	}
	return func() { unix.Close(fd) }, nil
}

// removeSaveTemps removes what saves interrupted by a crash left in the
// state directory (trustdir.WriteFile's temporary files: numbering.json's,
// the notification log's, the engine's) and says so once. The caller
// holds the directory's lock: no other daemon is saving there.
func removeSaveTemps(dir string, log *slog.Logger) {
	removed, err := trustdir.RemoveTemps(dir)
	if len(removed) > 0 {
		log.Info("state directory: removed the temporary files of interrupted saves", "dir", dir, "files", len(removed))
	}
	if err != nil {
		log.Warn("state directory: cannot remove a temporary file of an interrupted save", "dir", dir, "err", err)
	}
}
