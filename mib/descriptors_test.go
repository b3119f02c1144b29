package mib_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/perfagent/subagent/mib"
	"github.com/perfagent/subagent/mib/mibtest"
)

// chain is contexts "name/" down to depth len(arcs), as treeOf lines,
// and the path and relative id of the deepest.
func chain(names []string, arcs []string) (lines []string, path, rel string) {
	for i := range arcs {
		path += names[i] + "/"
		rel = strings.TrimPrefix(rel+"."+arcs[i], ".")
		lines = append(lines, path+" "+rel)
	}
	return lines, path, rel
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// A path whose descriptor cannot fit in 64 characters, even with the
// relative-id suffix, fails generation naming the path; nothing is written.
func TestPathsThatCannotBecomeDescriptorsFail(t *testing.T) {
	six := func(n int) []string { // n arcs of six digits
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprint(100001 + i)
		}
		return out
	}
	type impossible struct {
		name, path, why string
		tree            mib.Tree
	}
	var cases []impossible
	add := func(name, path, why string, tree mib.Tree) {
		cases = append(cases, impossible{name, path, why, tree})
	}

	// 13 contexts and two statistics clashing at depth 14, six-digit arcs:
	// the suffix alone is 98 characters.
	lines, p, r := chain(repeat("c", 13), six(13))
	lines = append(lines, p+"x "+r+".123456", p+"X "+r+".123457")
	add("deep clash", p+"x", "98 characters", treeOf(t, lines...))

	// Long words: the plain form is too long from depth 13 on, where the
	// suffix is 91 characters.
	lines, _, _ = chain(repeat("level", 14), six(14))
	want, _, _ := chain(repeat("level", 13), six(13))
	add("deep and long", strings.Fields(want[12])[0], "91 characters", treeOf(t, lines...))

	// Six levels of the largest arcs: 66 characters of suffix.
	lines, p, r = chain([]string{"A", "B", "C", "D", "E"}, repeat("4294967295", 5))
	lines = append(lines, p+"x "+r+".4294967294", p+"X "+r+".4294967295")
	add("wide arcs", p+"x", "66 characters", treeOf(t, lines...))

	// A 63-character suffix fits with one letter, but another node's
	// plain form is that very descriptor; the extra Z makes 64.
	big := repeat("1000000000", 5)
	lines, p, r = chain([]string{"A", "B", "C", "D", "E"}, big)
	lines = append(lines, p+"x "+r+".1000000", p+"X "+r+".1000001",
		"a"+"R"+strings.Join(append(big, "1000000"), "x")+"/ 7")
	add("suffixed form taken", p+"x", "64 characters", treeOf(t, lines...))

	for _, c := range cases {
		m, err := mib.Generate(c.tree, mib.Options{})
		prefix := fmt.Sprintf("mib: path %q cannot become a valid descriptor: ", c.path)
		if err == nil || !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: got %v, want %s... (%s)", c.name, err, prefix, c.why)
		}
		if m != nil {
			t.Errorf("%s: a module was written", c.name)
		}
	}
}

var importsRE = regexp.MustCompile(`(?s)\nIMPORTS\n(.*?);\n`)

// imported lists the names a module's IMPORTS clause brings in.
func imported(t *testing.T, m *mib.Module) []string {
	t.Helper()
	sm := importsRE.FindSubmatch(m.Text)
	if sm == nil {
		t.Fatal("no IMPORTS clause")
	}
	var out []string
	words := strings.Fields(strings.ReplaceAll(string(sm[1]), ",", " "))
	for i := 0; i < len(words); i++ {
		if words[i] == "FROM" {
			i++ // the module's name
			continue
		}
		out = append(out, words[i])
	}
	return out
}

// Contexts named like the types and conventions the module imports (or
// libsmi knows) get the suffix: a descriptor differing from such a name
// only in case makes smilint warn, and a manager's tools may mix them up.
func TestImportedNamesAreAvoided(t *testing.T) {
	base := mib.FromSnapshot(synthetic(t)) // imports every type there is
	extra := []string{
		"Gauge32/ 301", "Counter64/ 302", "Display/ 303", "Display/String/ 303.1",
		"Integer32/ 304", "Counter32/ 305", "Unsigned32/ 306", "TimeTicks/ 307",
		"Counter/ 308", "Counter/Based/ 308.1", "Counter/Based/Gauge64/ 308.1.1",
		"Enterprises/ 309", "Octet/ 310", "Octet/String/ 310.1", "Pointer/ 311",
	}
	tree := mib.Tree{Base: base.Base, Items: append(base.Items, treeOf(t, extra...).Items...)}
	m := generate(t, tree, mib.Options{})
	objs := byPath(m)
	want := map[string]string{
		"Gauge32/": "gauge32R301", "Counter64/": "counter64R302", "Display/String/": "displayStringR303x1",
		"Integer32/": "integer32R304", "Counter32/": "counter32R305", "Unsigned32/": "unsigned32R306",
		"TimeTicks/": "timeTicksR307", "Counter/Based/Gauge64/": "counterBasedGauge64R308x1x1",
		"Enterprises/": "enterprisesR309", "Display/": "display",
		// Base types libsmi knows, though no module imports them.
		"Octet/String/": "octetStringR310x1", "Pointer/": "pointerR311",
	}
	for path, name := range want {
		if got := objs[path].Name; got != name {
			t.Errorf("%s: got %q, want %q", path, got, name)
		}
	}
	imports := imported(t, m)
	for _, need := range []string{"Gauge32", "Counter64", "Integer32", "DisplayString", "CounterBasedGauge64", "enterprises"} {
		if !strings.Contains(" "+strings.Join(imports, " ")+" ", " "+need+" ") {
			t.Fatalf("the test module does not import %s: %v", need, imports)
		}
	}
	for _, o := range m.Objects {
		for _, imp := range imports {
			if strings.EqualFold(o.Name, imp) {
				t.Errorf("%s (%s) takes the imported name %s", o.Name, o.Path, imp)
			}
		}
	}
	mibtest.Require(t, "smilint")
	file, dirs := writeModule(t, m)
	mibtest.LintClean(t, file, dirs)
}

// docs/MIB.md's example of a path that cannot become a descriptor is the
// generator's message for that tree, as the command prints it.
func TestMIBDocDescriptorErrorIsTheGenerators(t *testing.T) {
	b, err := os.ReadFile("../docs/MIB.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, _ := strings.Cut(string(b), "\n## Descriptors\n")
	_, block, _ := strings.Cut(after, "```\n")
	block, _, _ = strings.Cut(block, "```")
	lines, p, r := chain([]string{"A", "B", "C", "D", "E"}, repeat("4294967295", 5))
	lines = append(lines, p+"x "+r+".4294967294", p+"X "+r+".4294967295")
	_, err = mib.Generate(treeOf(t, lines...), mib.Options{})
	if err == nil || strings.TrimSpace(block) != "subagent: "+err.Error() {
		t.Errorf("docs/MIB.md shows\n%s\nthe generator says\nsubagent: %v", strings.TrimSpace(block), err)
	}
}
