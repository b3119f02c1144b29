package libspmi

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/perfagent/subagent/libspmi/ctest"
)

// maxLines bounds every C source and header of the library (issue 29).
const maxLines = 600

// cGraph is which object of the library uses a global name another
// defines (a call or a variable), by source base name, read with nm from
// the objects ctest.Build compiled.
func cGraph(t *testing.T) (map[string]map[string][]string, map[string]string) {
	t.Helper()
	l := ctest.Build(t, "")
	half := map[string]string{} // base name -> "." , "supplier", "consumer"
	for _, src := range ctest.Sources(".") {
		h, err := filepath.Rel("src", filepath.Dir(src))
		if err != nil {
			t.Fatal(err)
		}
		half[strings.TrimSuffix(filepath.Base(src), ".c")] = h
	}
	half["rundir"] = "cshared"
	defines := map[string]string{}
	uses := map[string][]string{}
	for obj := range half {
		out, err := exec.Command("nm", "-P", filepath.Join(l.Dir, obj+".o")).Output()
		if err != nil {
			t.Fatalf("nm %s.o: %v", obj, err)
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) < 2 {
				continue
			}
			switch name, typ := f[0], f[1]; {
			case typ == "U":
				uses[obj] = append(uses[obj], name)
			case typ >= "A" && typ <= "Z":
				if other, dup := defines[name]; dup {
					t.Errorf("%s is defined in both %s.c and %s.c", name, other, obj)
				}
				defines[name] = obj
			}
		}
	}
	g := map[string]map[string][]string{}
	for obj, names := range uses {
		for _, n := range names {
			if def, ok := defines[n]; ok && def != obj {
				if g[obj] == nil {
					g[obj] = map[string][]string{}
				}
				g[obj][def] = append(g[obj][def], n)
			}
		}
	}
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
	if c := circle(g); c != nil {
		t.Fatalf("C sources in a circle: %s (each uses the next: %s)", strings.Join(c, " -> "), why(g, c))
	}
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

// circle returns a cycle of g (its first node repeated at the end), or nil.
func circle(g map[string]map[string][]string) []string {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var found []string
	var visit func(n string) bool
	visit = func(n string) bool {
		color[n] = grey
		stack = append(stack, n)
		for _, m := range sorted(g[n]) {
			switch color[m] {
			case grey:
				for i, s := range stack {
					if s == m {
						found = append(append([]string{}, stack[i:]...), m)
					}
				}
				return true
			case white:
				if visit(m) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[n] = black
		return false
	}
	for _, n := range sorted(g) {
		if color[n] == white && visit(n) {
			return found
		}
	}
	return nil
}

func why(g map[string]map[string][]string, c []string) string {
	var parts []string
	for i := 0; i+1 < len(c); i++ {
		parts = append(parts, c[i]+"->"+c[i+1]+" "+strings.Join(g[c[i]][c[i+1]], ","))
	}
	return strings.Join(parts, "; ")
}

func sorted[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// The check finds a circle where there is one (so a pass means none).
func TestCircleFinds(t *testing.T) {
	g := map[string]map[string][]string{
		"a": {"b": {"f"}}, "b": {"c": {"g"}}, "c": {"a": {"h"}, "d": {"i"}},
	}
	if c := circle(g); len(c) != 4 || c[0] != c[3] {
		t.Errorf("circle of a->b->c->a: got %v", c)
	}
	delete(g["c"], "a")
	if c := circle(g); c != nil {
		t.Errorf("no circle in a->b->c->d: got %v", c)
	}
}
