package docexamples

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every block of README.md and docs/*.md is listed in examples.txt, each
// line names a block, and a test a line names exists. The blocks still to
// do are reported in one skip that names them all.
func TestEveryDocBlockIsListed(t *testing.T) {
	blocks, err := All()
	if err != nil {
		t.Fatal(err)
	}
	entries, err := Listed()
	if err != nil {
		t.Fatal(err)
	}
	tests := testNames(t)
	listed := map[string]Entry{}
	var todo []string
	for _, e := range entries {
		if prev, dup := listed[e.Key()]; dup {
			t.Errorf("examples.txt:%d lists %s again (line %d)", e.Line, e.Key(), prev.Line)
		}
		listed[e.Key()] = e
		switch name, isTest := strings.CutPrefix(e.Status, "test "); {
		case isTest:
			if !tests[name] {
				t.Errorf("examples.txt:%d: no test %s in the repository", e.Line, name)
			}
		case strings.HasPrefix(e.Status, "todo: "):
			todo = append(todo, e.Key()+" ("+strings.TrimPrefix(e.Status, "todo: ")+")")
		case strings.HasPrefix(e.Status, "not run: ") && len(e.Status) > len("not run: "):
		default:
			t.Errorf("examples.txt:%d: status %q is not \"test NAME\", \"not run: why\" or \"todo: why\"", e.Line, e.Status)
		}
	}
	seen := map[string]bool{}
	for _, b := range blocks {
		seen[b.Key()] = true
		if _, ok := listed[b.Key()]; !ok {
			t.Errorf("%s:%d: a %q block not in internal/docexamples/examples.txt: run it in a test as printed, or list it as not runnable with why:\n  %s | test TestName", b.File, b.Line, b.Lang, b.Key())
		}
	}
	for _, e := range entries {
		if !seen[e.Key()] {
			t.Errorf("examples.txt:%d names no block: %s", e.Line, e.Key())
		}
	}
	if len(blocks) < 40 {
		t.Errorf("found %d blocks in README.md and docs/*.md: the parser lost some", len(blocks))
	}
	t.Run("todo", func(t *testing.T) {
		if len(todo) > 0 {
			t.Skipf("%d doc blocks not run by a test yet: %s", len(todo), strings.Join(todo, "; "))
		}
	})
}

// testNames are the Test functions of both modules.
func testNames(t *testing.T) map[string]bool {
	re := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	names := map[string]bool{}
	err := filepath.WalkDir(Root(), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "bin" || d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, "_test.go") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				names[m[1]] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// The snmpd drop-in the README and docs/INSTALL.md print is the shipped
// one's settings, line for line.
func TestDocDropInIsTheShippedOne(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(Root(), "packaging", "snmpd-subagent.conf"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			want = append(want, l)
		}
	}
	for _, blk := range For(t, "TestDocDropInIsTheShippedOne") {
		if got := strings.Split(strings.TrimSpace(blk.Text), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:%d prints\n%s\nthe shipped drop-in packaging/snmpd-subagent.conf sets\n%s", blk.File, blk.Line, blk.Text, strings.Join(want, "\n"))
		}
	}
}

// Parse keeps headings out of code (a "# comment" in a shell block is not
// one), counts blocks per heading and strips a list item's indentation.
func TestParse(t *testing.T) {
	text := "# Top\n\n```sh\n# not a heading\necho a\n```\n\n## Sub\n\n* item:\n\n  ```\n  x: 1\n  ```\n\n```yaml\ny: 2\n```\n"
	got := Parse("f.md", text)
	if len(got) != 3 || got[0].Heading != "# Top" || got[0].Text != "# not a heading\necho a\n" || got[0].Lang != "sh" ||
		got[1].Heading != "## Sub" || got[1].N != 1 || got[1].Text != "x: 1\n" || got[2].N != 2 || got[2].Lang != "yaml" {
		t.Errorf("%+v", got)
	}
}
