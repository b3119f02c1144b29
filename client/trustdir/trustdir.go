// Package trustdir decides whether a directory may hold the daemon's
// sockets and state, and reads and writes state files without following
// links planted by another user.
//
// It is hand-written because no well-kept library combines the owner and
// mode checks of a directory with O_NOFOLLOW, O_EXCL atomic writes. It uses
// only the standard library and golang.org/x/sys, so that client libraries
// can carry it without the daemon's dependencies.
package trustdir

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// MaxFileSize is the largest file ReadFile reads: state files are a few
// kilobytes, and a bigger one is damage or an attack, not state.
const MaxFileSize = 16 << 20

// euid is the effective uid the checks trust; tests replace it.
var euid = os.Geteuid

// owner is the uid of fi's owner.
func owner(fi fs.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

// openToOthers describes the group and other write bits of mode, "" when
// neither is set.
func openToOthers(m fs.FileMode) string {
	switch m.Perm() & 0o022 {
	case 0o022:
		return "group and others"
	case 0o020:
		return "group"
	case 0o002:
		return "others"
	}
	return ""
}

// Prepare makes dir ready for the daemon: a missing directory (and its
// missing parents) is created with mode; an existing one must be a real
// directory, owned by the effective uid or root, and not writable by group
// or others. The error names the directory, what is wrong and how to fix it.
func Prepare(dir string, mode os.FileMode) error {
	if dir == "" || !filepath.IsAbs(dir) {
		return fmt.Errorf("directory %q is not an absolute path", dir)
	}
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, mode.Perm()); err != nil {
			return fmt.Errorf("creating directory %s: %w", dir, err)
		}
		// Checked like an existing one: another user may have won the race.
		fi, err = os.Lstat(dir)
	}
	if err != nil {
		return fmt.Errorf("directory %s: %w", dir, err)
	}
	me := euid()
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(dir)
		return fmt.Errorf("directory %s is a symbolic link (to %s); fix: replace it with a directory owned by uid %d", dir, target, me)
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory (mode %v); fix: move it away", dir, fi.Mode())
	}
	var what, fix []string
	if uid := owner(fi); uid != me && uid != 0 {
		what = append(what, fmt.Sprintf("owned by uid %d, not by uid %d (this process) or root", uid, me))
		fix = append(fix, fmt.Sprintf("chown %d %s", me, dir))
	}
	if w := openToOthers(fi.Mode()); w != "" {
		what = append(what, fmt.Sprintf("mode %04o is writable by %s", fi.Mode().Perm(), w))
		fix = append(fix, "chmod go-w "+dir)
	}
	if len(what) > 0 {
		return fmt.Errorf("directory %s is not safe: %s; fix: %s", dir, strings.Join(what, ", "), strings.Join(fix, " && "))
	}
	return nil
}

// Check tells a client whether dir may hold the daemon's sockets. It is
// trusted when it is not a symbolic link, not writable by group or others,
// and either owned by root or the caller's effective uid, or inside a
// parent owned by root and not writable by group or others (such as
// /run/subagent made by systemd for a system user). The error names dir
// and why; a missing dir gives an error satisfying errors.Is(err,
// fs.ErrNotExist).
func Check(dir string) error {
	dir = filepath.Clean(dir)
	fi, err := os.Lstat(dir)
	if err != nil {
		return err // an *fs.PathError naming dir
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("directory %s is not trusted: it is a symbolic link", dir)
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	if w := openToOthers(fi.Mode()); w != "" {
		return fmt.Errorf("directory %s is not trusted: mode %04o is writable by %s", dir, fi.Mode().Perm(), w)
	}
	me, uid := euid(), owner(fi)
	if uid == 0 || uid == me {
		return nil
	}
	// Only root could have made the entry in such a parent, so it was
	// made for the daemon's user (systemd's RuntimeDirectory=).
	parent := filepath.Dir(dir)
	pi, err := os.Stat(parent)
	if err != nil {
		return fmt.Errorf("directory %s is not trusted: owned by uid %d, not root or uid %d, and its parent: %w", dir, uid, me, err)
	}
	if owner(pi) != 0 || openToOthers(pi.Mode()) != "" {
		return fmt.Errorf("directory %s is not trusted: owned by uid %d, not root or uid %d, and its parent %s (uid %d, mode %04o) is not owned by root and closed to group and others",
			dir, uid, me, parent, owner(pi), pi.Mode().Perm())
	}
	return nil
}

// tempName is a fresh name in dir that no other process can guess (a
// variable so that tests can plant links at the names it returns).
var tempName = func(dir, base string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return filepath.Join(dir, "."+base+tempSuffix+hex.EncodeToString(b[:])), nil
}

// WriteFile replaces path with data: a new file in the same directory,
// created exclusively without following links, written, synced, renamed
// over path (a link at path is replaced, not followed), and the directory
// synced. On any failure before the rename the temporary file is removed.
func WriteFile(path string, data []byte, perm os.FileMode) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	var tmp string
	fd := -1
	for range 10 {
		if tmp, err = tempName(dir, base); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		fd, err = unix.Open(tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
		if err != unix.EEXIST {
			break
		}
	}
	pattern := filepath.Join(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, &fs.PathError{Op: "open", Path: pattern, Err: err})
	}
	f := os.NewFile(uintptr(fd), tmp)
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, unnamed(err, tmp, pattern))
	}
	if err := syncDir(dir); err != nil {
		// The rename happened; only its durability is in doubt.
		return fmt.Errorf("writing %s: syncing the directory: %w", path, err)
	}
	return nil
}

// unnamed is err naming the temporary file by its pattern: a failure
// repeated (a full disk) then reads the same each time, and the log
// lines that quote it fold. err is this call's own.
func unnamed(err error, tmp, pattern string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == tmp {
		pe.Path = pattern
	}
	var le *os.LinkError
	if errors.As(err, &le) && le.Old == tmp {
		le.Old = pattern
	}
	return err
}

func syncDir(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	if err := unix.Fsync(fd); err != nil {
		return &fs.PathError{Op: "fsync", Path: dir, Err: err}
	}
	return nil
}

// ReadFile reads a regular file of at most MaxFileSize bytes without
// following a symbolic link at path. A missing file gives an error
// satisfying errors.Is(err, fs.ErrNotExist).
func ReadFile(path string) ([]byte, error) { return ReadFileMax(path, MaxFileSize) }

// ReadFileMax is ReadFile for a file of at most limit bytes.
func ReadFileMax(path string, limit int64) ([]byte, error) {
	// O_NONBLOCK: a FIFO planted at path must not hang the reader.
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err == unix.ELOOP {
		return nil, fmt.Errorf("%s is a symbolic link; refusing to follow it (move it away)", path)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (mode %v)", path, fi.Mode())
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s has %d bytes, more than the %d a state file may have", path, fi.Size(), limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s grew beyond the %d bytes a state file may have", path, limit)
	}
	return b, nil
}
