package libspmi

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfagent/subagent/internal/cgraph"
	"github.com/perfagent/subagent/internal/ctest"
)

// maxLines bounds every C source and header of the library (issue 29).
const maxLines = 600

// cGraph is which object of the library uses a global name another
// defines (a call or a variable), by source base name, read with nm from
// the objects plainLibrary compiled, and each object's half.
func cGraph(t *testing.T) (cgraph.Graph, map[string]string) {
	t.Helper()
	l := plainLibrary(t)
	half := map[string]string{} // base name -> "." , "supplier", "consumer"
	for _, src := range ctest.Sources(".") {
		h, err := filepath.Rel("src", filepath.Dir(src))
		if err != nil {
			t.Fatal(err)
		}
		half[strings.TrimSuffix(filepath.Base(src), ".c")] = h
	}
	half["rundir"] = "cshared"
	objs := map[string]string{}
	for obj := range half {
		objs[obj] = filepath.Join(l.Dir, obj+".o")
	}
	g := cgraph.Read(t, objs)
	if len(g) < 10 {
		t.Fatalf("only %d objects use another: nm read nothing? %v", len(g), g)
	}
	return g, half
}

// No two C files of libSpmi call each other, directly or around a circle:
// each file is a layer above the files it uses, so a change to one is
// read against the layers below it only.
func TestCSourcesCallNoCircle(t *testing.T) {
	g, _ := cGraph(t)
	cgraph.NoCircle(t, g)
}

// The supplier half (src/supplier) and the consumer half (src/consumer)
// use the shared sources of src/ and never each other; the shared
// sources use neither, except exit.c, SpmiExit, which ends both roles.
func TestCHalvesAreApart(t *testing.T) {
	g, half := cGraph(t)
	for from, tos := range g {
		for to, names := range tos {
			hf, ht := half[from], half[to]
			switch {
			case ht == "cshared" || hf == ht || ht == ".":
			case hf == "." && from == "exit":
			default:
				t.Errorf("%s.c (%s) uses %s.c (%s): %v", from, hf, to, ht, names)
			}
		}
	}
}

// Names say whose they are: the shared part's internals (src/) are
// spmi_*, the supplier half's dds_* and the consumer half's cons_* (or
// json_*), so that a name read in either half tells where it lives.
func TestCNamesCarryTheirPart(t *testing.T) {
	g, half := cGraph(t)
	prefix := map[string][]string{".": {"spmi_", "Spmi"}, "supplier": {"dds_", "Spmi"}, "consumer": {"cons_", "json_", "Spmi"}}
	seen := 0
	for _, tos := range g {
		for to, names := range tos {
			p, ok := prefix[half[to]]
			if !ok {
				continue
			}
			for _, n := range names {
				seen++
				if !hasAnyPrefix(n, p) {
					t.Errorf("%s (defined in %s.c, %s) does not start with %v", n, to, half[to], p)
				}
			}
		}
	}
	if seen < 30 {
		t.Fatalf("only %d uses of the library's names checked", seen)
	}
}

func hasAnyPrefix(s string, ps []string) bool {
	for _, p := range ps {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// No C source or header of the library is over maxLines lines.
func TestCSourcesAreShort(t *testing.T) {
	var files []string
	for _, h := range ctest.Halves {
		m, _ := filepath.Glob(filepath.Join("src", h, "*.[ch]"))
		files = append(files, m...)
	}
	if len(files) < 15 {
		t.Fatalf("only %d C files found under src/", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(b, []byte("\n")); n > maxLines {
			t.Errorf("%s has %d lines, over %d: split it", f, n, maxLines)
		}
	}
}
