package packaging

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// README's layout table names every folder of the tree (top-level ones,
// and each under internal/), so that a newcomer finds where things are.
func TestReadmeLayoutNamesEveryFolder(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(b), "\n## Layout\n")
	if !ok {
		t.Fatal("README.md has no Layout section")
	}
	layout, _, _ = strings.Cut(layout, "\n## ")
	var dirs []string
	for _, parent := range []string{"", "internal"} {
		ents, err := os.ReadDir(filepath.Join(repo, parent))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			name := e.Name()
			if !e.IsDir() || strings.HasPrefix(name, ".") || parent == "" && (name == "bin" || name == "internal") {
				continue // hidden, build output, or listed one by one
			}
			dirs = append(dirs, filepath.Join(parent, name)+"/")
		}
	}
	for _, d := range dirs {
		if !strings.Contains(layout, "`"+d) {
			t.Errorf("README.md's layout table does not name %s", d)
		}
	}
}
