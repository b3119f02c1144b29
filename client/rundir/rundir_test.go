package rundir

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestDefaultFor(t *testing.T) {
	for _, c := range []struct {
		uid       int
		xdg, want string
	}{
		{0, "/run/user/0", "/run/subagent"},
		{1000, "/run/user/1000", "/run/user/1000/subagent"},
		{1000, "", ""},
		{1000, "relative", ""},
	} {
		if got := DefaultFor(c.uid, c.xdg); got != c.want {
			t.Errorf("DefaultFor(%d, %q) = %q, want %q", c.uid, c.xdg, got, c.want)
		}
	}
}

// $SUBAGENT_RUN_DIR alone; otherwise this user's default, then the
// system daemon's; Find takes the first holding the socket, else the
// first.
func TestCandidatesAndFind(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(Env, dir)
	if got := Candidates(); !slices.Equal(got, []string{dir}) {
		t.Fatalf("with %s set: %v", Env, got)
	}
	if got := Find("x.sock"); got != dir {
		t.Errorf("Find with %s set: %q", Env, got)
	}
	t.Setenv(Env, "")
	xdg := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", xdg)
	want := []string{System}
	if os.Geteuid() != 0 {
		want = []string{filepath.Join(xdg, "subagent"), System}
	}
	if got := Candidates(); !slices.Equal(got, want) {
		t.Fatalf("candidates %v, want %v", got, want)
	}
	if got := Find("no-such.sock"); got != want[0] {
		t.Errorf("Find of a socket nowhere: %q, want the default %q", got, want[0])
	}
	if os.Geteuid() == 0 {
		return // root's only candidate is the system directory
	}
	own := filepath.Join(xdg, "subagent")
	if err := os.Mkdir(own, 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(own, "t.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if got := Find("t.sock"); got != own {
		t.Errorf("Find with the socket in this user's directory: %q", got)
	}
}

// The first candidate holding the socket in a trusted directory wins; a
// directory others may write is passed over, as is a plain file.
func TestFindTakesTheFirstTrustedSocket(t *testing.T) {
	base := t.TempDir()
	mk := func(name string, mode os.FileMode, sock bool) string {
		d := filepath.Join(base, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if sock {
			ln, err := net.Listen("unix", filepath.Join(d, "s.sock"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
		} else if err := os.WriteFile(filepath.Join(d, "s.sock"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, mode); err != nil {
			t.Fatal(err)
		}
		return d
	}
	empty := filepath.Join(base, "missing")
	file := mk("file", 0o700, false)
	open := mk("open", 0o777, true)
	good := mk("good", 0o700, true)
	if got := find([]string{empty, file, open, good}, "s.sock"); got != good {
		t.Errorf("find: %q, want %q", got, good)
	}
	if got := find([]string{empty, file, open}, "s.sock"); got != empty {
		t.Errorf("find without a trusted socket: %q, want the first candidate %q", got, empty)
	}
}
