package daemon

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/perfagent/subagent/client/trustdir"
	"github.com/perfagent/subagent/config"
)

// prepareDirs gives an empty run or state directory (a non-root user with
// neither XDG_RUNTIME_DIR nor a home) a private one made with mkdtemp,
// fills dds.socket when it followed the run directory, and checks every
// directory before anything loads or listens. It returns the private
// directories, and the run directory when it made it, which Run removes
// when it stops: a daemon tried by hand (`make run` as root) leaves no
// /run/subagent of root's behind for the installed service's user.
func prepareDirs(c *config.Config, log *slog.Logger) (private []string, err error) {
	defer func() {
		if err != nil {
			removeDirs(private)
			private = nil
		}
	}()
	if c.RunDir == "" {
		if c.RunDir, err = os.MkdirTemp("", "subagent-run-*"); err != nil {
			return private, fmt.Errorf("private run directory: %w", err)
		}
		private = append(private, c.RunDir)
		log.Warn("no run directory (no XDG_RUNTIME_DIR): using a private one; clients need SUBAGENT_RUN_DIR set to it, or start the daemon with --run-dir",
			"run_dir", c.RunDir)
	}
	if c.StateDir == "" {
		if c.StateDir, err = os.MkdirTemp("", "subagent-state-*"); err != nil {
			return private, fmt.Errorf("private state directory: %w", err)
		}
		private = append(private, c.StateDir)
		log.Warn("no state directory (no XDG_STATE_HOME or home): using a private one, removed at exit, so instance numbers are lost; start the daemon with --state-dir to keep them",
			"state_dir", c.StateDir)
	}
	if c.DDS.Socket == "" {
		c.DDS.Socket = filepath.Join(c.RunDir, "dds.sock")
	}
	// Every user must reach arm.sock (any program may post ARM
	// transactions); the other sockets keep their own modes.
	runMode := os.FileMode(0o750)
	if c.ARM.Enabled {
		runMode = 0o755
	}
	dirs := []struct {
		key, flag, dir string
		mode           os.FileMode
	}{
		{"run directory", "--run-dir", c.RunDir, runMode},
		{"state directory", "--state-dir", c.StateDir, 0o700},
	}
	if d := filepath.Dir(c.DDS.Socket); c.DDS.Enabled && d != filepath.Clean(c.RunDir) {
		dirs = append(dirs, struct {
			key, flag, dir string
			mode           os.FileMode
		}{"dds.socket directory", "dds.socket", d, 0o750})
	}
	if !slices.Contains(private, c.RunDir) && mkdirOwn(c.RunDir, runMode) {
		madeRunDirs.Store(c.RunDir, true)
		private = append(private, c.RunDir)
	}
	for _, d := range dirs {
		if err := trustdir.Prepare(d.dir, d.mode); err != nil {
			return private, fmt.Errorf("%s: %w, or choose another with %s", d.key, err, d.flag)
		}
	}
	return private, nil
}

// madeRunDirs are the run directories that prepareDirs made, not with
// mkdtemp: removeDirs removes them only when empty, so that a daemon that
// started on the same directory as this one stopped keeps its sockets.
var madeRunDirs sync.Map

// mkdirOwn makes dir (and its missing parents, as trustdir.Prepare would)
// and tells whether this call made dir: of two daemons starting at once,
// one did. Errors are left for Prepare, which makes and checks dir again.
func mkdirOwn(dir string, mode os.FileMode) bool {
	if !filepath.IsAbs(dir) || os.MkdirAll(filepath.Dir(dir), mode.Perm()) != nil {
		return false
	}
	return os.Mkdir(dir, mode.Perm()) == nil
}

func removeDirs(dirs []string) {
	for _, d := range dirs {
		if _, made := madeRunDirs.LoadAndDelete(d); made {
			os.Remove(d)
			continue
		}
		os.RemoveAll(d)
	}
}
