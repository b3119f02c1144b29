package main

import (
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A user refused by another daemon's socket while a daemon of their own
// serves a private run directory (no XDG_RUNTIME_DIR) is told to name that
// directory with SUBAGENT_RUN_DIR, not to ask an admin first; with none
// answering, the hint still says how to reach a daemon of one's own.
func TestRefusedUserIsToldOfTheirOwnDaemon(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	own := filepath.Join(tmp, "subagent-run-123")
	if err := os.Mkdir(own, 0o700); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "run")
	refused := fmt.Errorf("dial: %w", fs.ErrPermission)

	msg := daemonError(other, refused).Error()
	if want := "to ask a daemon of your own, set SUBAGENT_RUN_DIR (or --run-dir) to its run directory"; !strings.Contains(msg, want) {
		t.Errorf("no daemon of one's own:\n%s\nlacks %q", msg, want)
	}

	ln, err := net.Listen("unix", filepath.Join(own, "subagent.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	msg = daemonError(other, refused).Error()
	want := "a daemon of yours serves " + filepath.Join(own, "subagent.sock") + ": set SUBAGENT_RUN_DIR=" + own + " (or --run-dir) to ask it; otherwise "
	if !strings.Contains(msg, want) {
		t.Errorf("a daemon of one's own:\n%s\nlacks %q", msg, want)
	}
}
