package trustdir

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/perfagent/subagent/client/testutil"
)

// wantErr fails unless err mentions every one of subs.
func wantErr(t *testing.T, err error, subs ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one mentioning %q", subs)
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			t.Fatalf("error %q does not mention %q", err, s)
		}
	}
}

// asUID makes the checks see uid as the process's effective uid.
func asUID(t *testing.T, uid int) {
	old := euid
	euid = func() int { return uid }
	t.Cleanup(func() { euid = old })
}

func TestPrepareCreatesWithMode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "run")
	if err := Prepare(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.IsDir() || fi.Mode().Perm()&^0o750 != 0 {
		t.Fatalf("%s: mode %v, want a directory within 0750", dir, fi.Mode())
	}
	if err := Prepare(dir, 0o750); err != nil {
		t.Fatalf("an existing good directory: %v", err)
	}
	if err := Prepare("relative", 0o700); err == nil {
		t.Fatal("a relative path was accepted")
	}
}

func TestPrepareRefusesOpenDirectory(t *testing.T) {
	for _, mode := range []os.FileMode{0o777, 0o770, 0o757} {
		dir := filepath.Join(t.TempDir(), "run")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
		wantErr(t, Prepare(dir, 0o750), dir, fmt.Sprintf("mode %04o", mode), "writable by", "chmod go-w "+dir)
		wantErr(t, Check(dir), dir, "writable by")
	}
}

func TestPrepareRefusesOtherOwner(t *testing.T) {
	testutil.RequireRoot(t)
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, testutil.Nobody, testutil.Nobody); err != nil {
		t.Fatal(err)
	}
	wantErr(t, Prepare(dir, 0o700), dir, "owned by uid 65534", "chown 0 "+dir)

	// As another non-root uid, a root-owned directory is still good.
	asUID(t, 1000)
	if err := os.Chown(dir, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := Prepare(dir, 0o700); err != nil {
		t.Fatalf("root-owned directory as uid 1000: %v", err)
	}
}

func TestSymlinkedDirectoryRefused(t *testing.T) {
	tmp := t.TempDir()
	real := filepath.Join(tmp, "real")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(tmp, "run")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	wantErr(t, Prepare(link, 0o750), link, "symbolic link")
	wantErr(t, Check(link), link, "symbolic link")
	if err := Check(real); err != nil {
		t.Fatalf("the real directory: %v", err)
	}
}

// Check trusts a directory of another user only inside a root-owned
// parent closed to others: /run/subagent, not /tmp/subagent-1000.
func TestCheckOwnerAndParent(t *testing.T) {
	testutil.RequireRoot(t)
	asUID(t, 1000) // a client that is neither root nor the owner
	closed := t.TempDir()
	open := t.TempDir()
	if err := os.Chmod(open, 0o1777); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		parent string
		owner  int
		ok     bool
	}{
		{closed, testutil.Nobody, true}, // made by root for the daemon's user
		{closed, 0, true},
		{closed, 1000, true},
		{open, testutil.Nobody, false}, // anyone could have made it
		{open, 0, true},
		{open, 1000, true},
	} {
		dir := filepath.Join(tc.parent, fmt.Sprintf("subagent-%d", tc.owner))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, tc.owner, tc.owner); err != nil {
			t.Fatal(err)
		}
		err := Check(dir)
		if tc.ok && err != nil {
			t.Errorf("%s owned by %d: %v", dir, tc.owner, err)
		}
		if !tc.ok {
			wantErr(t, err, dir, "owned by uid 65534", "parent "+tc.parent)
		}
	}
	if err := Check(filepath.Join(closed, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing directory: %v", err)
	}
}

// plant puts a symbolic link to victim at each name in dir.
func plant(t *testing.T, dir, victim string, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.Symlink(victim, filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWriteFileNeverFollowsLinks(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "numbering.json")
	plant(t, dir, victim, "numbering.json", "numbering.json.tmp", ".numbering.json.tmp")

	// A temp name that exists (here as a link) is never opened: force the
	// first random names to collide by planting them.
	old := tempName
	var tried []string
	tempName = func(d, base string) (string, error) {
		n, err := old(d, base)
		if len(tried) < 3 {
			plant(t, dir, victim, filepath.Base(n))
		}
		tried = append(tried, n)
		return n, err
	}
	t.Cleanup(func() { tempName = old })

	if err := WriteFile(path, []byte("new\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if len(tried) != 4 {
		t.Fatalf("%d temp names tried, want 4 (3 taken by links)", len(tried))
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Fatalf("the link's target was written: %q", b)
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("%s: %v %v, want a regular file replacing the link", path, fi, err)
	}
	if b, _ := ReadFile(path); string(b) != "new\n" {
		t.Fatalf("content %q", b)
	}
	for _, n := range tried[:3] {
		if fi, err := os.Lstat(n); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Fatalf("planted link %s: %v %v", n, fi, err)
		}
	}
	if _, err := os.Lstat(tried[3]); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("temp file %s left: %v", tried[3], err)
	}
}

func TestWriteFileFailureRemovesTemp(t *testing.T) {
	dir := t.TempDir()
	// Renaming a file over a non-empty directory fails after the write.
	path := filepath.Join(dir, "state.json")
	if err := os.MkdirAll(filepath.Join(path, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	wantErr(t, WriteFile(path, []byte("x"), 0o600), path)
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("left in %s: %v", dir, ents)
	}
}

func TestConcurrentWriteFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rtimelan.json")
	const n = 32
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- WriteFile(path, bytes.Repeat([]byte{byte('a' + i%26)}, 64<<10), 0o600)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	b, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 64<<10 || !bytes.Equal(b, bytes.Repeat(b[:1], len(b))) {
		t.Fatalf("%d bytes, mixed from several writers", len(b))
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("temp files left: %v", ents)
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.json")
	if err := os.WriteFile(real, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "numbering.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	b, err := ReadFile(link)
	wantErr(t, err, link, "symbolic link")
	if b != nil {
		t.Fatalf("read %q through a link", b)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	if b, err := ReadFile(real); err != nil || string(b) != "{}" {
		t.Fatalf("%q %v", b, err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxFileSize+1); err != nil {
		t.Fatal(err)
	}
	_, err = ReadFile(big)
	wantErr(t, err, big, "more than")
	wantErr(t, func() error { _, err := ReadFile(dir); return err }(), dir, "not a regular file")
}

// A failed write names the temporary file by its pattern, never its
// random name: the same failure reads the same each time (log lines
// quoting it fold).
func TestWriteFileErrorsAreStable(t *testing.T) {
	dir := t.TempDir()
	over := filepath.Join(dir, "sub") // a directory: the rename fails
	if err := os.Mkdir(over, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{over, filepath.Join(dir, "missing", "f")} {
		e1, e2 := WriteFile(path, []byte("x"), 0o600), WriteFile(path, []byte("x"), 0o600)
		if e1 == nil || e2 == nil {
			t.Fatalf("%s: writes succeeded: %v %v", path, e1, e2)
		}
		if e1.Error() != e2.Error() || !strings.Contains(e1.Error(), ".tmp-*") {
			t.Errorf("%s: errors differ or name a random file:\n%v\n%v", path, e1, e2)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
}
