package mib_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/mib"
	"github.com/perfagent/subagent/mib/mibtest"
	"github.com/perfagent/subagent/mib/schema"
	"github.com/perfagent/subagent/spmi"
)

// writeModule puts the module where the tools find it and returns the
// file and the module path (the imported modules first).
func writeModule(t testing.TB, m *mib.Module) (file string, dirs []string) {
	t.Helper()
	dir := t.TempDir()
	file = filepath.Join(dir, m.Name+".txt")
	if err := os.WriteFile(file, m.Text, 0o644); err != nil {
		t.Fatal(err)
	}
	return file, append(mibtest.BaseDirs(t), dir)
}

// checkWithTools lints file (m's text) and has net-snmp translate every
// statistic OID of tree to a name, every name back, and describe every
// statistic's type.
func checkWithTools(t *testing.T, file string, dirs []string, m *mib.Module, tree mib.Tree) {
	t.Helper()
	mibtest.LintClean(t, file, dirs)
	env := mibtest.NetSNMPEnv(t)
	objs := byPath(m)

	// Every statistic a walk can return, numeric to name.
	var oids, want []string
	var declared []*mib.Item
	for i := range tree.Items {
		it := &tree.Items[i]
		if !it.IsStat() {
			continue
		}
		oid := m.Base.Append(it.Rel...).Append(0)
		name, rest := longestPrefix(m, oid)
		if o, ok := objs[it.Path]; ok {
			if o.Macro != "OBJECT-TYPE" || !o.OID.Equal(oid[:len(oid)-1]) {
				t.Fatalf("%s declared as %s at %s", it.Path, o.Macro, o.OID)
			}
			declared = append(declared, it)
			if name != o.Name || rest != "0" {
				t.Fatalf("%s: the definitions' longest prefix is %s.%s, not its own", it.Path, name, rest)
			}
		} else if strings.Count(rest, ".") < 2 {
			// Not declared: only statistics inside instances of
			// continuously instantiable contexts, shown as context.I.S.0.
			t.Errorf("%s is neither declared nor below an instance (%s.%s)", it.Path, name, rest)
		}
		oids = append(oids, "."+oid.String())
		want = append(want, m.Name+"::"+name+"."+rest)
	}
	if len(declared) == 0 {
		t.Fatal("no statistic declared")
	}
	got := mibtest.Translate(t, env, dirs, m.Name, nil, oids)
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("snmptranslate %s: got %s, want %s", oids[i], got[i], want[i])
		}
	}

	// Every definition, name to numeric; statistics with their instance
	// (.0, or row 1 in a table: an index's range starts at 1).
	var names, numeric []string
	for _, o := range m.Objects {
		names = append(names, m.Name+"::"+o.Name)
		numeric = append(numeric, "."+o.OID.String())
		if o.Macro == "OBJECT-TYPE" {
			inst := ".0"
			for _, tb := range m.Tables {
				if o.OID.HasPrefix(tb.OID) && len(o.OID) > len(tb.OID)+1 {
					inst = ".1"
				}
			}
			names = append(names, m.Name+"::"+o.Name+inst)
			numeric = append(numeric, "."+o.OID.String()+inst)
		}
	}
	got = mibtest.Translate(t, env, dirs, m.Name, []string{"-On"}, names)
	for i := range got {
		if got[i] != numeric[i] {
			t.Errorf("snmptranslate -On %s: got %s, want %s", names[i], got[i], numeric[i])
		}
	}

	// Every declared statistic's type as net-snmp understands it.
	var descNames []string
	for _, it := range declared {
		descNames = append(descNames, m.Name+"::"+objs[it.Path].Name)
	}
	defs := mibtest.Describe(t, env, dirs, m.Name, descNames)
	for i, it := range declared {
		d, ok := defs[descNames[i]]
		if !ok {
			t.Errorf("snmptranslate -Td does not know %s", descNames[i])
			continue
		}
		if w := wantDefinition(it.Stat); d != w {
			t.Errorf("%s (%s): net-snmp reads %+v, want %+v", it.Path, descNames[i], d, w)
		}
	}
	t.Logf("%s: %d statistics resolved, %d declared, %d definitions translated back", m.Name, len(oids), len(declared), len(m.Objects))
}

// longestPrefix is what net-snmp prints for oid: the longest defined
// prefix and the rest in numbers.
func longestPrefix(m *mib.Module, oid asn1tree.OID) (name, rest string) {
	best := -1
	for _, o := range m.Objects {
		if len(o.OID) > best && oid.HasPrefix(o.OID) {
			best, name = len(o.OID), o.Name
		}
	}
	parts := make([]string, 0, len(oid)-best)
	for _, a := range oid[best:] {
		parts = append(parts, strconv.FormatUint(uint64(a), 10))
	}
	return name, strings.Join(parts, ".")
}

// wantDefinition states from the type rules, not from the generator, what
// net-snmp must read: the wire type, the scaling hint, the units.
func wantDefinition(d *spmiwire.StatDesc) mibtest.Definition {
	w := mibtest.Definition{Macro: "OBJECT-TYPE", Access: "read-only", Units: d.Units}
	if w.Units == "" && d.Val == ddswire.SiCounter && d.Data != spmiwire.SiText {
		w.Units = "events" // every counter says what it counts
	}
	switch d.Form {
	case spmiwire.FormBool:
		w.TC, w.Syntax, w.Units = "TruthValue", "INTEGER {true(1), false(2)}", ""
		return w
	case spmiwire.FormTime:
		w.TC, w.Syntax, w.Hint, w.Units = "DateAndTime", "OCTET STRING (8 | 11)", "2d-1d-1d,1d:1d:1d.1d,1a1d:1d", ""
		return w
	}
	switch spmi.SNMPKind(d) {
	case asn1tree.OctetString:
		w.TC, w.Syntax, w.Hint, w.Units = "DisplayString", "OCTET STRING (0..255)", "255a", ""
	case asn1tree.Counter64:
		w.Syntax = "Counter64"
		if d.Val == ddswire.SiQuantity {
			w.TC = "CounterBasedGauge64"
		}
		if d.Scale > 0 {
			w.Units = strings.TrimSpace("0." + strings.Repeat("0", int(d.Scale)-1) + "1 " + d.Units)
		}
	case asn1tree.Integer32, asn1tree.Gauge32:
		w.Syntax = spmi.SNMPKind(d).String()
		if d.Scale > 0 {
			w.TC = "Scaled" + strings.TrimSuffix(w.Syntax, "32") + strconv.Itoa(int(d.Scale))
			w.Hint = "d-" + strconv.Itoa(int(d.Scale))
		}
	}
	return w
}

func TestSyntheticModuleWithTheTools(t *testing.T) {
	mibtest.Require(t, "smilint", "snmptranslate")
	tree := mib.FromSnapshot(synthetic(t))
	m := generate(t, tree, mib.Options{})
	file, dirs := writeModule(t, m)
	checkWithTools(t, file, dirs, m, tree)
}

// A module of part of the tree, under another name and base, is as clean.
func TestPartialModuleWithTheTools(t *testing.T) {
	mibtest.Require(t, "smilint", "snmptranslate")
	full := mib.FromSnapshot(synthetic(t))
	m := generate(t, full, mib.Options{Module: "ACME-PERF-MIB", Base: asn1tree.MustParse("1.3.6.1.3.4242.7"), Include: []string{"Mem/Real/", "Proc/pid/"}})
	file, dirs := writeModule(t, m)
	mibtest.LintClean(t, file, dirs)
	env := mibtest.NetSNMPEnv(t)
	got := mibtest.Translate(t, env, dirs, m.Name, nil, []string{
		".1.3.6.1.3.4242.7.2.1.3.0", ".1.3.6.1.3.4242.7.10.100.77.2.0", ".1.3.6.1.3.4242.7.1.1.4.0",
	})
	want := []string{"ACME-PERF-MIB::memRealPctFree.0", "ACME-PERF-MIB::procPid.77.2.0", "ACME-PERF-MIB::acmePerfMIB.1.1.4.0"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("got %s, want %s", got[i], want[i])
		}
	}
}

// The notifications and their objects, as a trap receiver decodes them.
func TestNotificationsWithTheTools(t *testing.T) {
	mibtest.Require(t, "snmptranslate")
	m := generate(t, mib.FromSnapshot(synthetic(t)), mib.Options{})
	_, dirs := writeModule(t, m)
	env := mibtest.NetSNMPEnv(t)
	var oids, want []string
	for _, n := range schema.Notifications() {
		oids = append(oids, "."+n.OID(m.Base).String())
		want = append(want, m.Name+"::"+n.Name)
	}
	for _, o := range schema.NotifyObjects() {
		oids = append(oids, "."+o.Instance(m.Base).String())
		want = append(want, m.Name+"::"+o.Name+".0")
	}
	got := mibtest.Translate(t, env, dirs, m.Name, nil, oids)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s: got %s, want %s", oids[i], got[i], want[i])
		}
	}
	var names []string
	for _, o := range schema.NotifyObjects() {
		names = append(names, m.Name+"::"+o.Name)
	}
	defs := mibtest.Describe(t, env, dirs, m.Name, names)
	for _, o := range schema.NotifyObjects() {
		d := defs[m.Name+"::"+o.Name]
		syn := d.Syntax
		if d.TC != "" {
			syn = d.TC
		}
		if d.Access != "accessible-for-notify" || syn != o.Syntax {
			t.Errorf("%s: net-snmp reads %+v, want %s accessible-for-notify", o.Name, d, o.Syntax)
		}
	}
}

// Every warning the tests accept is explained in docs/MIB.md.
func TestAcceptedWarningsAreDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/MIB.md")
	if err != nil {
		t.Fatal(err)
	}
	for tag := range mibtest.Accepted {
		if !strings.Contains(string(doc), "| `"+tag+"` |") {
			t.Errorf("docs/MIB.md does not list the accepted smilint warning %s", tag)
		}
	}
}

// net-snmp loads IP-MIB and TCP-MIB by default, which name mib-2's ip and
// tcp like the module's IP/ and TCP/ contexts; same names in two modules
// must stay apart, whatever the load order. A small module reusing the
// synthetic tree's names (mem, memReal, proc) under mib-2 stands in.
func TestNamesSharedWithStandardModules(t *testing.T) {
	mibtest.Require(t, "snmptranslate")
	m := generate(t, mib.FromSnapshot(synthetic(t)), mib.Options{Include: []string{"Mem/", "Proc/"}})
	_, dirs := writeModule(t, m)
	other := `OTHER-MIB DEFINITIONS ::= BEGIN
IMPORTS MODULE-IDENTITY, OBJECT-TYPE, Counter64, mib-2 FROM SNMPv2-SMI;
otherMIB MODULE-IDENTITY
    LAST-UPDATED "202611230000Z" ORGANIZATION "o" CONTACT-INFO "c" DESCRIPTION "d"
    ::= { mib-2 9999 }
mem OBJECT IDENTIFIER ::= { mib-2 4 }
proc OBJECT IDENTIFIER ::= { mib-2 6 }
memReal OBJECT-TYPE SYNTAX Counter64 MAX-ACCESS read-only STATUS current DESCRIPTION "x" ::= { mem 1 }
END
`
	if err := os.WriteFile(filepath.Join(dirs[len(dirs)-1], "OTHER-MIB.txt"), []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	env := mibtest.NetSNMPEnv(t)
	for _, order := range []string{"OTHER-MIB:" + m.Name, m.Name + ":OTHER-MIB"} {
		got := mibtest.Translate(t, env, dirs, order, nil, []string{
			"." + testBase.String() + ".2.1.3.0", ".1.3.6.1.2.1.4.1.0", "." + testBase.String() + ".10.1.0",
		})
		want := []string{m.Name + "::memRealPctFree.0", "OTHER-MIB::memReal.0", m.Name + "::procRunque.0"}
		got = append(got, mibtest.Translate(t, env, dirs, order, []string{"-On"}, []string{m.Name + "::memReal", "OTHER-MIB::memReal"})...)
		want = append(want, "."+testBase.String()+".2.1", ".1.3.6.1.2.1.4.1")
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("loading %s: got %s, want %s", order, got[i], want[i])
			}
		}
	}
}
