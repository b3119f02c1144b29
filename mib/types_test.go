package mib_test

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/mib"
	"github.com/perfagent/subagent/mib/mibtest"
)

// objDef is an OBJECT-TYPE as the module text writes it.
type objDef struct {
	Syntax, Units, Access string
	HasUnits              bool
}

var (
	objectRE = regexp.MustCompile(`(?m)^(\w+) OBJECT-TYPE\n {4}SYNTAX +(.*)\n(?: {4}UNITS +"(.*)"\n)? {4}MAX-ACCESS +(\S+)`)
	hintRE   = regexp.MustCompile(`(?m)^(\w+) ::= TEXTUAL-CONVENTION\n {4}DISPLAY-HINT "(.*)"`)
)

// objectDefs reads every OBJECT-TYPE of m, by descriptor.
func objectDefs(t *testing.T, m *mib.Module) map[string]objDef {
	t.Helper()
	out := map[string]objDef{}
	for _, sm := range objectRE.FindAllStringSubmatch(string(m.Text), -1) {
		d := objDef{Syntax: sm[2], Units: sm[3], Access: sm[4]}
		d.HasUnits = strings.Contains(sm[0], "\n    UNITS")
		out[sm[1]] = d
	}
	if len(out) == 0 {
		t.Fatal("no OBJECT-TYPE found in the module")
	}
	return out
}

// statsOf pairs the module's statistic objects (scalars and columns)
// with their descriptions.
func statsOf(m *mib.Module, tree mib.Tree) map[string]*spmiwire.StatDesc {
	byPath := map[string]*spmiwire.StatDesc{}
	for i := range tree.Items {
		if it := &tree.Items[i]; it.IsStat() {
			byPath[it.Path] = it.Stat
		}
	}
	out := map[string]*spmiwire.StatDesc{}
	for _, o := range m.Objects {
		if d := byPath[o.Path]; o.Macro == "OBJECT-TYPE" && d != nil {
			out[o.Name] = d
		}
	}
	for _, tb := range m.Tables {
		for _, c := range tb.Columns {
			out[c.Name] = c.Stat
		}
	}
	return out
}

// notUnits are UNITS that name no unit: a PID is an identifier, a
// priority has none, a boolean is TruthValue, and milliseconds are spelt
// out everywhere.
var notUnits = []string{"boolean", "ms", "process ID", "priority"}

// checkTypes fails on every object of m a manager would render wrong.
func checkTypes(t *testing.T, m *mib.Module, tree mib.Tree, unitsRequired bool) {
	t.Helper()
	defs := objectDefs(t, m)
	hints := map[string]string{}
	for _, sm := range hintRE.FindAllStringSubmatch(string(m.Text), -1) {
		hints[sm[1]] = sm[2]
	}
	stats := statsOf(m, tree)
	if len(stats) == 0 {
		t.Fatal("no statistic object in the module")
	}
	for name, d := range stats {
		def, ok := defs[name]
		if !ok {
			t.Errorf("%s (%s): no OBJECT-TYPE in the text", name, d.Name)
			continue
		}
		switch d.Form {
		case spmiwire.FormBool:
			if def.Syntax != "TruthValue" || def.HasUnits {
				t.Errorf("%s: a boolean is %q with units %q, want TruthValue without UNITS", name, def.Syntax, def.Units)
			}
		case spmiwire.FormTime:
			if def.Syntax != "DateAndTime" || def.HasUnits {
				t.Errorf("%s: a time is %q with units %q, want DateAndTime without UNITS", name, def.Syntax, def.Units)
			}
		}
		if d.Scale > 0 {
			factor := "0." + strings.Repeat("0", int(d.Scale)-1) + "1"
			hint := hints[def.Syntax]
			switch {
			case strings.HasPrefix(def.Syntax, "Counter") && !strings.HasPrefix(def.Units, factor):
				// RFC 2579 keeps hints from Counter64: UNITS say the scale.
				t.Errorf("%s: scaled 64-bit %s has UNITS %q, not starting with %s", name, def.Syntax, def.Units, factor)
			case !strings.HasPrefix(def.Syntax, "Counter") && hint != "d-"+strconv.Itoa(int(d.Scale)):
				t.Errorf("%s: scaled by 10^%d but %s has DISPLAY-HINT %q", name, d.Scale, def.Syntax, hint)
			}
			if unitsRequired && (def.Units == "" || d.Units == "") {
				t.Errorf("%s: scaled %s has UNITS %q, from the statistic's units %q", name, def.Syntax, def.Units, d.Units)
			}
		}
	}
	for name, def := range defs {
		if def.HasUnits && slices.Contains(notUnits, def.Units) {
			t.Errorf("%s: UNITS %q", name, def.Units)
		}
		if def.Access == "not-accessible" && strings.HasPrefix(def.Syntax, "Unsigned32") &&
			!regexp.MustCompile(`^Unsigned32 \(\d+\.\.\d+\)$`).MatchString(def.Syntax) {
			t.Errorf("%s: the index is %q, without a range", name, def.Syntax)
		}
	}
}

// The shipped module: scaled objects carry a DISPLAY-HINT (or, 64-bit,
// their scale in UNITS) and UNITS; booleans are TruthValue, the hotset
// exceptions' time DateAndTime; no UNITS that is no unit; every index
// has a range.
func TestShippedObjectsRenderWell(t *testing.T) {
	tree := referenceTree(t)
	m := generate(t, tree, mib.Options{})
	checkTypes(t, m, tree, true)
	stats := statsOf(m, tree)
	for _, want := range []struct{ name, syntax string }{
		{"agentAgentxConnected", "TruthValue"}, {"agentProvApart", "TruthValue"},
		{"hotsetExcpTime", "DateAndTime"}, {"hotsetFeedValue", "CounterBasedGauge64"},
	} {
		if stats[want.name] == nil || objectDefs(t, m)[want.name].Syntax != want.syntax {
			t.Errorf("%s: not declared as %s", want.name, want.syntax)
		}
	}
	// Undeclared instances' statistics too (per-process ones).
	for _, it := range tree.Items {
		if it.IsStat() && slices.Contains(notUnits, it.Stat.Units) {
			t.Errorf("%s: units %q", it.Path, it.Stat.Units)
		}
	}
}

// The same rules on the synthetic tree (every type, scaled 64-bit ones
// with and without units) and on booleans and times under DDS, where a
// row may be numbered 0.
func TestSyntheticObjectsRenderWell(t *testing.T) {
	tree := mib.FromSnapshot(synthetic(t))
	checkTypes(t, generate(t, tree, mib.Options{}), tree, false)

	tree = formsTree(t)
	m := generate(t, tree, mib.Options{})
	checkTypes(t, m, tree, false)
	defs := objectDefs(t, m)
	for name, want := range map[string]string{
		"ddsAcmeHostUp": "TruthValue", "ddsAcmeHostSince": "DateAndTime", "ddsAcmeHostIndex": "Unsigned32 (0..4294967295)",
	} {
		if defs[name].Syntax != want {
			t.Errorf("%s: SYNTAX %q, want %q", name, defs[name].Syntax, want)
		}
	}
	if !strings.Contains(string(m.Text), "TruthValue, DateAndTime\n        FROM SNMPv2-TC") {
		t.Errorf("the module does not import TruthValue and DateAndTime from SNMPv2-TC")
	}
	mibtest.Require(t, "smilint")
	file, dirs := writeModule(t, m)
	mibtest.LintClean(t, file, dirs)
}

// formsTree is a DDS vendor's table of hosts with a boolean and a time,
// one row numbered 0.
func formsTree(t *testing.T) mib.Tree {
	t.Helper()
	tree := treeOf(t, "DDS/ 99", "DDS/Acme/ 99.4242", "DDS/Acme/host/ 99.4242.1",
		"DDS/Acme/host/a/ 99.4242.1.0", "DDS/Acme/host/a/up 99.4242.1.0.1", "DDS/Acme/host/a/since 99.4242.1.0.2")
	for i := range tree.Items {
		it := &tree.Items[i]
		switch {
		case it.Path == "DDS/Acme/host/":
			it.Rows, it.Inst = true, ddswire.SiCfgInst
		case it.Path == "DDS/Acme/host/a/":
			it.Instance = true
		case strings.HasSuffix(it.Path, "/up"):
			it.Stat.Form = spmiwire.FormBool
		case strings.HasSuffix(it.Path, "/since"):
			it.Stat.Form, it.Stat.Max = spmiwire.FormTime, 1<<31
		}
	}
	return tree
}
