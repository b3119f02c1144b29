package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/perfagent/subagent/client/trustdir"
	"github.com/perfagent/subagent/config"
)

// dirSpec is a directory the daemon needs, as its errors name it.
type dirSpec struct {
	key, flag, dir string
	mode           os.FileMode
}

// prepareDirs gives an empty run or state directory (a non-root user with
// neither XDG_RUNTIME_DIR nor a home) a private one made with mkdtemp,
// fills dds.socket when it followed the run directory, and checks every
// directory that exists before anything loads or listens. It makes no
// other directory: makeDirs (Run) does, once nothing else can refuse the
// start. It returns the private directories, which Run removes when it
// stops, and the directories for makeDirs.
func prepareDirs(c *config.Config, log *slog.Logger) (private []string, dirs []dirSpec, err error) {
	defer func() {
		if err != nil {
			removeDirs(private)
			private = nil
		}
	}()
	if c.RunDir == "" {
		if c.RunDir, err = os.MkdirTemp("", "subagent-run-*"); err != nil {
			return private, nil, fmt.Errorf("private run directory: %w", err)
		}
		private = append(private, c.RunDir)
		log.Warn("no run directory (no XDG_RUNTIME_DIR): using a private one; clients need SUBAGENT_RUN_DIR set to it, or start the daemon with --run-dir",
			"run_dir", c.RunDir)
	}
	if c.StateDir == "" {
		if c.StateDir, err = os.MkdirTemp("", "subagent-state-*"); err != nil {
			return private, nil, fmt.Errorf("private state directory: %w", err)
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
	dirs = []dirSpec{
		{"run directory", "--run-dir", c.RunDir, runMode},
		{"state directory", "--state-dir", c.StateDir, 0o700},
	}
	if d := filepath.Dir(c.DDS.Socket); c.DDS.Enabled && d != filepath.Clean(c.RunDir) {
		dirs = append(dirs, dirSpec{"dds.socket directory", "dds.socket", d, 0o750})
	}
	for _, d := range dirs {
		if !filepath.IsAbs(d.dir) {
			return private, nil, fmt.Errorf("%s: %q is not an absolute path; choose another with %s", d.key, d.dir, d.flag)
		}
		if _, err := os.Lstat(d.dir); errors.Is(err, fs.ErrNotExist) {
			continue // made and checked by makeDirs
		}
		if err := trustdir.Prepare(d.dir, d.mode); err != nil {
			return private, nil, fmt.Errorf("%s: %w, or choose another with %s", d.key, err, d.flag)
		}
	}
	return private, dirs, nil
}

// makeDirs makes the missing directories of dirs and checks them all. It
// returns the directories it made, for removeMade when the start fails
// after all; on an error it has removed them itself.
func makeDirs(dirs []dirSpec) (made []string, err error) {
	for _, d := range dirs {
		_, statErr := os.Lstat(d.dir)
		if err := trustdir.Prepare(d.dir, d.mode); err != nil {
			removeMade(made)
			return nil, fmt.Errorf("%s: %w, or choose another with %s", d.key, err, d.flag)
		}
		if errors.Is(statErr, fs.ErrNotExist) {
			made = append(made, d.dir)
		}
	}
	return made, nil
}

// removeMade removes the directories a failed start made, newest first,
// each only when empty.
func removeMade(made []string) {
	for _, d := range slices.Backward(made) {
		madeRunDirs.Delete(d)
		os.Remove(d)
	}
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
