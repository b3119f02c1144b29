package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The numbering of the tree is frozen once released: every path, relative
// id and OID of the reference hierarchy (the fixture /proc and /sys, a fresh
// state directory) must stay as recorded. Run `go test ./cmd/subagent -run
// Golden -update` after an intended change and review the diff.
func TestGoldenPeekOfReferenceHierarchy(t *testing.T) {
	e := newEnv(t)
	out, stderr, code := e.run(append([]string{"peek", "--oid", "--local"}, e.args()...)...)
	if code != 0 {
		t.Fatalf("peek: %s", stderr)
	}
	golden := filepath.Join("testdata", "peek-reference.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (create it with -update)", err)
	}
	if out != string(want) {
		got, exp := strings.Split(out, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(got) || i < len(exp); i++ {
			var g, w string
			if i < len(got) {
				g = got[i]
			}
			if i < len(exp) {
				w = exp[i]
			}
			if g != w {
				t.Fatalf("peek of the reference hierarchy differs from %s at line %d:\n got: %q\nwant: %q\n(run with -update after an intended change)", golden, i+1, g, w)
			}
		}
	}
}
