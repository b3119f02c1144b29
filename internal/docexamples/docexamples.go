// Package docexamples finds the fenced code blocks of README.md and
// docs/*.md, for the tests that run them as printed, and checks that each
// is run by a test or listed in examples.txt as not runnable, with why.
package docexamples

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Block is one fenced code block: the file (relative to the repository),
// the heading it stands under, its place among that heading's blocks
// (from 1), its info string (sh, go, yaml or "") and its text.
type Block struct {
	File, Heading string
	N             int
	Lang, Text    string
	Line          int // of the opening fence
}

// Key names a block as examples.txt does.
func (b Block) Key() string { return fmt.Sprintf("%s | %s | %d", b.File, b.Heading, b.N) }

// Root is the repository's directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Parse lists the blocks of a Markdown text. A fence may be indented (in
// a list item); its lines lose that indentation.
func Parse(file, text string) []Block {
	var out []Block
	heading := ""
	count := map[string]int{}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		t := strings.TrimLeft(l, " ")
		if strings.HasPrefix(l, "#") {
			heading = strings.TrimSpace(l)
			continue
		}
		if !strings.HasPrefix(t, "```") {
			continue
		}
		indent := len(l) - len(t)
		b := Block{File: file, Heading: heading, Lang: strings.TrimSpace(t[3:]), Line: i + 1}
		var body []string
		for i++; i < len(lines); i++ {
			if strings.HasPrefix(strings.TrimLeft(lines[i], " "), "```") {
				break
			}
			body = append(body, strings.TrimPrefix(lines[i], strings.Repeat(" ", indent)))
		}
		count[heading]++
		b.N = count[heading]
		b.Text = strings.Join(body, "\n") + "\n"
		out = append(out, b)
	}
	return out
}

// All lists the blocks of README.md and docs/*.md.
func All() ([]Block, error) {
	root := Root()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	var out []Block
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(root, f)
		out = append(out, Parse(rel, string(b))...)
	}
	return out, nil
}

// Get returns the n-th block under heading in file, failing the test
// when there is none.
func Get(t testing.TB, file, heading string, n int) Block {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Root(), file))
	if err != nil {
		t.Fatal(err)
	}
	for _, blk := range Parse(file, string(b)) {
		if blk.Heading == heading && blk.N == n {
			return blk
		}
	}
	t.Fatalf("%s has no block %d under %q", file, n, heading)
	return Block{}
}
