package daemon

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
)

// A start removes the temporary files that saves interrupted by a kill -9
// left in the state directory, once it holds the directory's lock, and
// says how many; a second daemon on the same state directory (another run
// directory) is refused while the first runs, and removes nothing.
func TestStartRemovesTempsOfInterruptedSaves(t *testing.T) {
	c := fixtureConfig(t)
	plant := func(names ...string) {
		t.Helper()
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(c.StateDir, n), []byte("{half"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	temps := []string{".numbering.json.tmp-0123456789abcdef", ".notifications.json.tmp-fedcba9876543210",
		".notifications.journal.tmp-00112233445566aa", ".snmp-engine.tmp-a1b2c3d4e5f60718"}
	others := []string{"keep.tmp-0123456789abcdef", ".numbering.json.tmp-short", "notes.txt"}
	plant(append(temps, others...)...)

	var logs testutil.Buffer
	d, err := New(c, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	testutil.Eventually(t, "the daemon to start (control socket ready)", 10*time.Second, func() bool {
		return strings.Contains(logs.String(), "control socket ready")
	})
	for _, n := range temps {
		if _, err := os.Lstat(filepath.Join(c.StateDir, n)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s left after the start: %v", n, err)
		}
	}
	for _, n := range others {
		if _, err := os.Lstat(filepath.Join(c.StateDir, n)); err != nil {
			t.Errorf("%s, not a temporary file of a save, removed: %v", n, err)
		}
	}
	if got := strings.Count(logs.String(), "removed the temporary files of interrupted saves"); got != 1 || !strings.Contains(logs.String(), "files=4") {
		t.Errorf("the start logged the removal %d times, want once with files=4:\n%s", got, logs.String())
	}

	// A second daemon, same state directory, its own run directory.
	plant(temps[0])
	c2 := fixtureConfig(t)
	c2.StateDir = c.StateDir
	d2, err := New(c2, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := d2.Run(t.Context()); err == nil || !strings.Contains(err.Error(), "used by another daemon") {
		t.Errorf("a second daemon on the state directory: %v, want a refusal", err)
	}
	if _, err := os.Lstat(filepath.Join(c.StateDir, temps[0])); err != nil {
		t.Errorf("the refused daemon removed %s: %v", temps[0], err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
