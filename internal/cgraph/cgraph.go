// Package cgraph is the layering check of the C libraries (libspmi,
// libarm): which object file uses a global name another defines (a call
// or a variable), read with nm, and the circles of that graph. A library
// whose files call each other only one way reads from the bottom up.
package cgraph

import (
	"bufio"
	"bytes"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Graph maps an object to the objects it uses, each with the names used.
type Graph map[string]map[string][]string

// Read builds the graph of objs (a name, such as the source's base name,
// to its object file's path). A name defined in two objects fails t.
func Read(t testing.TB, objs map[string]string) Graph {
	t.Helper()
	defines := map[string]string{}
	uses := map[string][]string{}
	for _, obj := range slices.Sorted(maps.Keys(objs)) {
		out, err := exec.Command("nm", "-P", objs[obj]).Output()
		if err != nil {
			t.Fatalf("nm %s: %v", objs[obj], err)
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
					t.Errorf("%s is defined in both %s and %s", name, other, obj)
				}
				defines[name] = obj
			}
		}
	}
	g := Graph{}
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
	return g
}

// Circle returns a cycle of g (its first node repeated at the end), or nil.
func Circle(g Graph) []string {
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
		for _, m := range slices.Sorted(maps.Keys(g[n])) {
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
	for _, n := range slices.Sorted(maps.Keys(g)) {
		if color[n] == white && visit(n) {
			return found
		}
	}
	return nil
}

// Why says what each object of the cycle c uses of the next.
func Why(g Graph, c []string) string {
	var parts []string
	for i := 0; i+1 < len(c); i++ {
		parts = append(parts, c[i]+"->"+c[i+1]+" "+strings.Join(g[c[i]][c[i+1]], ","))
	}
	return strings.Join(parts, "; ")
}

// NoCircle fails t when g has a cycle, naming it and why.
func NoCircle(t testing.TB, g Graph) {
	t.Helper()
	if c := Circle(g); c != nil {
		t.Fatalf("C sources in a circle: %s (each uses the next: %s)", strings.Join(c, " -> "), Why(g, c))
	}
}
