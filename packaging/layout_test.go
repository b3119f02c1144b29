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

// maxFolderLines bounds the code of a top-level folder, so that each
// stays small enough to find one's way in; the client module, a whole
// module for vendors, is the exception.
const maxFolderLines = 5000

// No top-level folder holds more than maxFolderLines lines of code:
// non-blank lines of Go (tests not counted), C sources and headers
// (counted whole, test programs included), testdata left out.
func TestNoFolderIsTooLarge(t *testing.T) {
	ents, err := os.ReadDir(repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		name := e.Name()
		if !e.IsDir() || strings.HasPrefix(name, ".") || name == "bin" || name == "client" {
			continue
		}
		lines := 0
		err := filepath.WalkDir(filepath.Join(repo, name), func(p string, d os.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && d.Name() == "testdata":
				return filepath.SkipDir
			case d.IsDir() || strings.HasSuffix(p, "_test.go"):
				return nil
			}
			switch filepath.Ext(p) {
			case ".go", ".c", ".h":
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				for _, l := range strings.Split(string(b), "\n") {
					if strings.TrimSpace(l) != "" {
						lines++
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if lines > maxFolderLines {
			t.Errorf("%s/ holds %d lines of code, more than %d: split it", name, lines, maxFolderLines)
		}
	}
}
