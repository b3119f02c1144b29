package promtest

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Rule is one recording or alerting rule of a rules file.
type Rule struct {
	Record, Alert, Expr string
	For                 string
	Labels, Annotations map[string]string
}

// Rules reads the rules of a Prometheus rules file, group by group.
func Rules(t testing.TB, file string) []Rule {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Name  string
			Rules []Rule
		}
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var out []Rule
	for _, g := range f.Groups {
		out = append(out, g.Rules...)
	}
	return out
}

// Panel is a dashboard panel's query.
type Panel struct {
	Title, Expr string
}

// DashboardQueries returns every target's expr of every panel of a Grafana
// dashboard, rows' panels included.
func DashboardQueries(t testing.TB, file string) []Panel {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	type panel struct {
		Title   string
		Panels  []json.RawMessage
		Targets []struct{ Expr string }
	}
	var d struct{ Panels []json.RawMessage }
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var out []Panel
	var walk func([]json.RawMessage)
	walk = func(ps []json.RawMessage) {
		for _, raw := range ps {
			var p panel
			if err := json.Unmarshal(raw, &p); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			for _, tg := range p.Targets {
				out = append(out, Panel{Title: p.Title, Expr: tg.Expr})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

var (
	quoted   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	matchers = regexp.MustCompile(`\{[^}]*\}`)
	ranges   = regexp.MustCompile(`\[[^\]]*\]`)
	grouping = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	variable = regexp.MustCompile(`\$\{?\w+\}?`)
	ident    = regexp.MustCompile(`[\w:.]+`)
	keywords = map[string]bool{
		"sum": true, "min": true, "max": true, "avg": true, "count": true, "stddev": true, "stdvar": true,
		"topk": true, "bottomk": true, "quantile": true, "count_values": true, "group": true,
		"and": true, "or": true, "unless": true, "bool": true, "offset": true, "inf": true, "nan": true,
		"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	}
)

// MetricNames returns the metric names a PromQL expression selects: its
// identifiers that are not functions, keywords or labels. rated holds
// those it takes rate() or increase() of.
func MetricNames(expr string) (names []string, rated map[string]bool) {
	rated = map[string]bool{}
	for _, m := range regexp.MustCompile(`\b(?:rate|irate|increase)\(\s*([a-zA-Z_:][\w:]*)`).FindAllStringSubmatch(expr, -1) {
		rated[m[1]] = true
	}
	e := quoted.ReplaceAllString(expr, `""`)
	e = matchers.ReplaceAllString(e, " ")
	e = ranges.ReplaceAllString(e, " ")
	e = grouping.ReplaceAllString(e, " ")
	e = variable.ReplaceAllString(e, " ")
	seen := map[string]bool{}
	for _, loc := range ident.FindAllStringIndex(e, -1) {
		w := e[loc[0]:loc[1]]
		// Numbers (1e3, 0.5) and durations start with a digit or a dot.
		if w[0] >= '0' && w[0] <= '9' || w[0] == '.' || keywords[w] || seen[w] {
			continue
		}
		// A function is followed by its parenthesis.
		if strings.HasPrefix(strings.TrimLeft(e[loc[1]:], " \t\n"), "(") {
			continue
		}
		seen[w] = true
		names = append(names, w)
	}
	return names, rated
}

// Object is a SUBAGENT-MIB object as snmp_exporter exports it.
type Object struct {
	Syntax  string
	Counter bool // a counter in Prometheus: Counter64, not overridden to gauge
}

// ExportedObjects returns the objects of the MIB module that the
// snmp_exporter generator configuration exports as metrics: every
// OBJECT-TYPE its module's walk reaches (the object or a node above it is
// walked) but those its overrides ignore, typed as the generator types
// them.
func ExportedObjects(t testing.TB, mibFile, generatorYml string) map[string]Object {
	t.Helper()
	mib, err := os.ReadFile(mibFile)
	if err != nil {
		t.Fatal(err)
	}
	gen, err := os.ReadFile(generatorYml)
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Modules map[string]struct {
			Walk      []string
			Overrides map[string]struct {
				Ignore bool
				Type   string
			}
		}
	}
	if err := yaml.Unmarshal(gen, &g); err != nil {
		t.Fatalf("%s: %v", generatorYml, err)
	}
	mod, ok := g.Modules["subagent"]
	if !ok {
		t.Fatalf("%s has no module subagent", generatorYml)
	}
	walked := map[string]bool{}
	for _, w := range mod.Walk {
		walked[w] = true
	}
	// Each node's parent, from its "::= { parent n }".
	parent := map[string]string{}
	nodes := regexp.MustCompile(`(?ms)^(\w+)\s+(?:OBJECT-TYPE|OBJECT-IDENTITY|OBJECT IDENTIFIER|MODULE-IDENTITY)\b.*?::=\s*\{\s*(\w+)\s`)
	for _, m := range nodes.FindAllStringSubmatch(string(mib), -1) {
		parent[m[1]] = m[2]
	}
	reached := func(name string) bool {
		for n, i := name, 0; n != "" && i < 100; n, i = parent[n], i+1 {
			if walked[n] {
				return true
			}
		}
		return false
	}
	out := map[string]Object{}
	re := regexp.MustCompile(`(?m)^(\w+) OBJECT-TYPE\s+SYNTAX\s+([\w-]+)`)
	for _, m := range re.FindAllStringSubmatch(string(mib), -1) {
		name, syntax := m[1], m[2]
		o := mod.Overrides[name]
		if o.Ignore || strings.HasSuffix(name, "Table") || strings.HasSuffix(name, "Entry") || !reached(name) {
			continue
		}
		out[name] = Object{Syntax: syntax, Counter: syntax == "Counter64" && o.Type != "gauge" || syntax == "Counter32"}
	}
	return out
}
