package hoststats

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfagent/subagent/spmi"
)

// One kind of failure of /proc/[pid]/stat logs one warning, whichever
// processes it hits from refresh to refresh; another kind logs again, and
// recovery logs once.
func TestProcessStatFailureLogsOncePerKind(t *testing.T) {
	cfg := FixtureConfig(copyFixture(t))
	cfg.Disabled = map[string]bool{"Disk": true, "LAN": true, "FS": true}
	var buf bytes.Buffer
	h := spmi.NewHierarchy(spmi.Config{Base: testBase, Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	for _, p := range providers(t, cfg) {
		h.Add(p)
	}
	stat := func(pid string) string { return filepath.Join(cfg.ProcRoot, pid, "stat") }
	intact := map[string][]byte{}
	for _, pid := range []string{"1", "2", "734", "1187"} {
		b, err := os.ReadFile(stat(pid))
		if err != nil {
			t.Fatal(err)
		}
		intact[pid] = b
	}
	restore := func() {
		for pid, b := range intact {
			os.RemoveAll(stat(pid))
			if err := os.WriteFile(stat(pid), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	warns := func() int { return strings.Count(buf.String(), "level=WARN") }
	// Processes come and go: each refresh another one has a damaged file.
	for _, pid := range []string{"1", "2", "734", "1187"} {
		restore()
		os.WriteFile(stat(pid), []byte(pid+" garbage\n"), 0o644)
		if s := h.Refresh(); len(s.Failures) != 1 {
			t.Fatalf("failures %v", s.Failures)
		}
	}
	if n := warns(); n != 1 {
		t.Fatalf("%d warnings for one kind of failure over 4 refreshes:\n%s", n, &buf)
	}
	// Another kind: a read error.
	restore()
	os.Remove(stat("2"))
	os.Mkdir(stat("2"), 0o755)
	h.Refresh()
	h.Refresh()
	if n := warns(); n != 2 {
		t.Fatalf("%d warnings after a second kind of failure:\n%s", n, &buf)
	}
	restore()
	h.Refresh()
	h.Refresh()
	if n := strings.Count(buf.String(), "source readable again"); n != 1 || warns() != 2 {
		t.Fatalf("recovery logged %d times:\n%s", n, &buf)
	}
}
