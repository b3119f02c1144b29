package docexamples

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Entry is one line of examples.txt.
type Entry struct {
	File, Heading string
	N             int
	Status        string // "test NAME", "not run: why" or "todo: why"
	Line          int
}

// Key is the block's key, as Block.Key.
func (e Entry) Key() string { return fmt.Sprintf("%s | %s | %d", e.File, e.Heading, e.N) }

// Listed reads examples.txt.
func Listed() ([]Entry, error) {
	name := filepath.Join(Root(), "internal", "docexamples", "examples.txt")
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for i, l := range strings.Split(string(b), "\n") {
		if t := strings.TrimSpace(l); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		f := strings.SplitN(l, " | ", 4)
		n, err := strconv.Atoi(strings.TrimSpace(safe(f, 2)))
		if len(f) != 4 || err != nil {
			return nil, fmt.Errorf("examples.txt:%d: want \"file | heading | n | status\", got %q", i+1, l)
		}
		out = append(out, Entry{File: f[0], Heading: f[1], N: n, Status: strings.TrimSpace(f[3]), Line: i + 1})
	}
	return out, nil
}

func safe(f []string, i int) string {
	if i < len(f) {
		return f[i]
	}
	return ""
}

// For returns the blocks examples.txt says test runs.
func For(t testing.TB, test string) []Block {
	t.Helper()
	entries, err := Listed()
	if err != nil {
		t.Fatal(err)
	}
	var out []Block
	for _, e := range entries {
		if e.Status == "test "+test {
			out = append(out, Get(t, e.File, e.Heading, e.N))
		}
	}
	if len(out) == 0 {
		t.Fatalf("examples.txt lists no block for %s", test)
	}
	return out
}

// WarmModuleCache makes sure the client module's requirements
// (golang.org/x/sys) are in the module cache, fetching them only when
// they are not, so that a test then builds a module of its own offline
// (GOPROXY=off).
func WarmModuleCache(t testing.TB) {
	t.Helper()
	cmd := exec.Command("go", "mod", "download")
	cmd.Dir = filepath.Join(Root(), "client")
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go mod download in client/: %v\n%s", err, out)
	}
}
