package mib_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/perfagent/subagent/client/consumer"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/control/controltest"
	"github.com/perfagent/subagent/mib"
	"github.com/perfagent/subagent/spmi"
)

func generate(t testing.TB, tree mib.Tree, opts mib.Options) *mib.Module {
	t.Helper()
	m, err := mib.Generate(tree, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// byPath indexes a module's definitions of tree nodes.
func byPath(m *mib.Module) map[string]mib.Object {
	out := map[string]mib.Object{}
	for _, o := range m.Objects {
		if o.Path != "" {
			out[o.Path] = o
		}
	}
	return out
}

func TestSameTreeSameBytesWhateverTheOrder(t *testing.T) {
	tree := mib.FromSnapshot(synthetic(t))
	a := generate(t, tree, mib.Options{})
	rev := mib.Tree{Base: tree.Base, Items: slices.Clone(tree.Items)}
	slices.Reverse(rev.Items)
	b := generate(t, rev, mib.Options{})
	if !bytes.Equal(a.Text, b.Text) {
		t.Fatalf("item order changed the module (%s)", firstDiff(a.Text, b.Text))
	}
	if want := `LAST-UPDATED "` + mib.Revisions[0].Date + `"`; !bytes.Contains(a.Text, []byte(want)) {
		t.Errorf("LAST-UPDATED is not the newest revision kept in the source (%s)", want)
	}
	if n := bytes.Count(a.Text, []byte("REVISION ")); n != len(mib.Revisions) {
		t.Errorf("%d REVISION clauses, %d revisions in the source", n, len(mib.Revisions))
	}
}

// The daemon's peek answer carries each context's instance flag, so the
// module built from it is the one built from the snapshot.
func TestPeekEntriesGiveTheSnapshotsModule(t *testing.T) {
	s := synthetic(t)
	want := generate(t, mib.FromSnapshot(s), mib.Options{Instances: true})
	entries, err := spmi.Peek(s, "")
	if err != nil {
		t.Fatal(err)
	}
	tree, err := mib.FromEntries(entries)
	if err != nil {
		t.Fatal(err)
	}
	if !tree.Base.Equal(testBase) {
		t.Errorf("base from the entries: %s, want %s", tree.Base, testBase)
	}
	if got := generate(t, tree, mib.Options{Instances: true}); !bytes.Equal(got.Text, want.Text) {
		t.Fatalf("modules differ: %s", firstDiff(got.Text, want.Text))
	}
	// The flag is what tells instances from fixed contexts.
	for i := range entries {
		entries[i].Instance = false
	}
	if tree, err = mib.FromEntries(entries); err != nil {
		t.Fatal(err)
	}
	if got := generate(t, tree, mib.Options{Instances: true}); bytes.Equal(got.Text, want.Text) {
		t.Error("the module does not depend on the entries' instance flags")
	}
}

// Through a real control socket, as `subagent mib` asks a running daemon.
func TestModuleFromARunningControlSocket(t *testing.T) {
	h := spmi.NewHierarchy(spmi.Config{Base: testBase})
	h.Add(syntheticProvider{})
	dir := t.TempDir()
	controltest.Serve(t, dir, h)
	c, err := consumer.Dial(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	entries, err := c.Peek(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	tree, err := mib.FromEntries(entries)
	if err != nil {
		t.Fatal(err)
	}
	want := generate(t, mib.FromSnapshot(synthetic(t)), mib.Options{Instances: true})
	if got := generate(t, tree, mib.Options{Instances: true}); !bytes.Equal(got.Text, want.Text) {
		t.Fatalf("module over the socket differs: %s", firstDiff(got.Text, want.Text))
	}
}

func TestDeclarationsAndTypes(t *testing.T) {
	m := generate(t, mib.FromSnapshot(synthetic(t)), mib.Options{Instances: true})
	objs := byPath(m)
	// Written out by hand from the type rules: counters Counter64, wide
	// levels CounterBasedGauge64, text DisplayString, scaled levels the
	// Scaled convention of their base type and decimal places.
	want := map[string]struct{ name, macro, syntax string }{
		"CPU/":              {"cpu", "OBJECT-IDENTITY", ""},
		"CPU/total/":        {"cpuTotal", "OBJECT-IDENTITY", ""},
		"CPU/total/idle":    {"cpuTotalIdle", "OBJECT-TYPE", "ScaledGauge2"},
		"CPU/cpu0/":         {"cpuCpu0", "OBJECT-IDENTITY", ""},
		"CPU/cpu0/user":     {"cpuCpu0User", "OBJECT-TYPE", "Counter64"},
		"CPU/cpu1/idle":     {"cpuCpu1Idle", "OBJECT-TYPE", "ScaledGauge2"},
		"Mem/Real/size":     {"memRealSize", "OBJECT-TYPE", "CounterBasedGauge64"},
		"Mem/Real/%free":    {"memRealPctFree", "OBJECT-TYPE", "ScaledGauge1"},
		"Mem/Real/temp":     {"memRealTemp", "OBJECT-TYPE", "ScaledInteger1"},
		"Mem/Real/avail":    {"memRealAvail", "OBJECT-TYPE", "CounterBasedGauge64"},
		"Mem/Real/pages":    {"memRealPages", "OBJECT-TYPE", "Counter64"},
		"Mem/Real/frag":     {"memRealFrag", "OBJECT-TYPE", "ScaledGauge3"},
		"Disk/":             {"disk", "OBJECT-IDENTITY", ""},
		"Proc/runque":       {"procRunque", "OBJECT-TYPE", "Gauge32"},
		"Proc/pid/":         {"procPid", "OBJECT-IDENTITY", ""},
		"Proc/pid/4242/":    {},
		"Proc/pid/1/nice":   {},
		"Proc/pid/1/name":   {},
		"Proc/pid/4242/cpu": {},
	}
	for path, w := range want {
		o, ok := objs[path]
		if w.name == "" {
			if ok {
				t.Errorf("%s lies in an instance of a continuously instantiable context but is declared as %s", path, o.Name)
			}
			continue
		}
		if !ok {
			t.Errorf("%s is not declared", path)
			continue
		}
		if o.Name != w.name || o.Macro != w.macro || o.Syntax != w.syntax {
			t.Errorf("%s: got %s %s %q, want %s %s %q", path, o.Name, o.Macro, o.Syntax, w.name, w.macro, w.syntax)
		}
		rel := mustRel(t, synthetic(t), path)
		if !o.OID.Equal(testBase.Append(rel...)) {
			t.Errorf("%s: OID %s, want base + %s", path, o.OID, rel)
		}
	}
	text := flat(m.Text)
	for _, s := range []string{
		`ScaledGauge2 ::= TEXTUAL-CONVENTION DISPLAY-HINT "d-2"`,
		`ScaledInteger1 ::= TEXTUAL-CONVENTION DISPLAY-HINT "d-1"`,
		`tands for 1234.5." SYNTAX Integer32`, // the base of ScaledInteger1
		`cpuCpu0User OBJECT-TYPE SYNTAX Counter64 UNITS "0.01 seconds"`,
		`UNITS "degrees Celsius"`,
		"Default scale: -40 to 100 degrees Celsius.",
		"Board 'temperature' (Mem/Real/temp)",
		// The continuous context lists its instances' statistics once.
		"1 cpu: Counter64, ticks. CPU time.",
		"3 nice: Integer32. Nice value.",
		"procPid.I.S.0",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("module lacks %q", s)
		}
	}
	if strings.Contains(text, "ScaledGauge4") || strings.Contains(text, "ScaledInteger2") {
		t.Error("a convention no object uses is defined")
	}
}

// flat is the module text with every run of white space made one space.
func flat(b []byte) string { return strings.Join(strings.Fields(string(b)), " ") }

func mustRel(t testing.TB, s *spmi.Snapshot, path string) asn1tree.OID {
	t.Helper()
	n, err := s.Lookup(path)
	if err != nil {
		t.Fatal(err)
	}
	return n.Rel
}

func TestIncludeSelectsSubtrees(t *testing.T) {
	tree := mib.FromSnapshot(synthetic(t))
	cases := []struct {
		include     []string
		has, hasNot []string
	}{
		{[]string{"CPU/"}, []string{"CPU/", "CPU/cpu1/idle", "CPU/total/user"}, []string{"Mem/", "Proc/runque", "Disk/"}},
		{[]string{"Mem/Real/%free"}, []string{"Mem/", "Mem/Real/", "Mem/Real/%free"}, []string{"Mem/Real/size", "CPU/"}},
		{[]string{"Proc/pid/4242/name"}, []string{"Proc/", "Proc/pid/"}, []string{"Proc/runque", "Proc/pid/4242/", "Proc/pid/4242/name"}},
		{[]string{"Disk", " Mem/Real/ "}, []string{"Disk/", "Mem/Real/size"}, []string{"CPU/", "Proc/"}},
	}
	for _, c := range cases {
		m := generate(t, tree, mib.Options{Include: c.include, Instances: true})
		objs := byPath(m)
		for _, p := range c.has {
			if _, ok := objs[p]; !ok {
				t.Errorf("include %v: %s missing", c.include, p)
			}
		}
		for _, p := range c.hasNot {
			if _, ok := objs[p]; ok {
				t.Errorf("include %v: %s declared", c.include, p)
			}
		}
		// The module's own parts stay: notifications and conformance.
		if !bytes.Contains(m.Text, []byte("hotsetTrap1 NOTIFICATION-TYPE")) || !bytes.Contains(m.Text, []byte("MODULE-COMPLIANCE\n")) {
			t.Errorf("include %v dropped the notifications or the compliance", c.include)
		}
	}
	m := generate(t, tree, mib.Options{Include: []string{"CPU/"}, Instances: true})
	if bytes.Contains(m.Text, []byte("HCNUM-TC")) {
		t.Error("HCNUM-TC imported though no wide level is declared")
	}
	if !bytes.Contains(m.Text, []byte("describes only CPU/.")) {
		t.Error("the description does not name the included subtree")
	}
	if _, err := mib.Generate(tree, mib.Options{Include: []string{"Nope/"}}); err == nil || !strings.Contains(err.Error(), "Nope/") {
		t.Errorf("unknown include: %v", err)
	}
}

// treeOf builds a tree from contexts and statistics given as
// "path rel" for contexts (path ending in /) and statistics.
func treeOf(t testing.TB, lines ...string) mib.Tree {
	t.Helper()
	tree := mib.Tree{Base: testBase}
	for _, l := range lines {
		f := strings.Fields(l)
		it := mib.Item{Path: f[0], Descr: "d", Rel: asn1tree.MustParse(f[1])}
		if !strings.HasSuffix(f[0], "/") {
			it.Stat = &spmiwire.StatDesc{Name: f[0][strings.LastIndexByte(f[0], '/')+1:], Val: ddswire.SiQuantity, Max: 1}
		}
		tree.Items = append(tree.Items, it)
	}
	return tree
}

func TestCollisionsAndLengthGetTheRelativeIDSuffix(t *testing.T) {
	long := strings.Repeat("verylongname", 4)
	tree := treeOf(t,
		"Mem/ 2", "Mem/Real/ 2.1",
		"Mem/Real/free 2.1.2", "Mem/Real/Free 2.1.8", "Mem/Real/%free 2.1.3",
		"Subagent/ 50", "Subagent/MIB 50.1", // takes the module identity's name
		"Subagent/hotset-name 50.2", // not a clash: subagentHotsetName
		"X/ 60", "X/"+long+"/ 60.1", "X/"+long+"/"+long+" 60.1.7",
	)
	objs := byPath(generate(t, tree, mib.Options{Instances: true}))
	want := map[string]string{
		"Mem/Real/free":          "memRealFreeR2x1x2",
		"Mem/Real/Free":          "memRealFreeR2x1x8",
		"Mem/Real/%free":         "memRealPctFree",
		"Subagent/MIB":           "subagentMIBR50x1",
		"Subagent/hotset-name":   "subagentHotsetName",
		"X/" + long + "/" + long: (("x" + titled(long) + titled(long))[:64-len("R60x1x7")]) + "R60x1x7",
		"X/" + long + "/":        "x" + titled(long),
		"Subagent/":              "subagent",
		"Mem/Real/":              "memReal",
	}
	for path, name := range want {
		if got := objs[path].Name; got != name {
			t.Errorf("%s: got %q, want %q", path, got, name)
		}
	}
	// Stability: other nodes coming and going do not rename these.
	more := treeOf(t, "Mem/ 2", "Mem/Real/ 2.1", "Mem/Real/%free 2.1.3", "Mem/Real/size 2.1.1", "CPU/ 1", "CPU/total/ 1.0", "CPU/total/idle 1.0.4")
	objs2 := byPath(generate(t, more, mib.Options{Instances: true}))
	if objs2["Mem/Real/%free"].Name != "memRealPctFree" || objs2["CPU/total/idle"].Name != "cpuTotalIdle" {
		t.Errorf("names changed with the tree: %v", objs2)
	}
}

func titled(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

func TestBaseAnchoring(t *testing.T) {
	tree := treeOf(t, "Mem/ 2", "Mem/free 2.1")
	cases := map[string]string{
		"1.3.6.1.4.1.32473.1": "::= { enterprises 32473 1 }",
		"1.3.6.1.3.77":        "::= { experimental 77 }",
		"1.3.6.1.2.1.999.5":   "::= { mib-2 999 5 }",
		"1.3.6.1.5.3":         "::= { internet 5 3 }",
	}
	for base, want := range cases {
		m := generate(t, tree, mib.Options{Base: asn1tree.MustParse(base)})
		if !bytes.Contains(m.Text, []byte(want)) {
			t.Errorf("base %s: module lacks %q", base, want)
		}
		if o := byPath(m)["Mem/free"]; !o.OID.Equal(asn1tree.MustParse(base + ".2.1")) {
			t.Errorf("base %s: Mem/free at %s", base, o.OID)
		}
	}
	for _, base := range []string{"1.3.6.1", "2.5.4.3", "1.3.6"} {
		if _, err := mib.Generate(tree, mib.Options{Base: asn1tree.MustParse(base)}); err == nil {
			t.Errorf("base %s accepted", base)
		}
	}
}

func TestBadTreesAreRefused(t *testing.T) {
	cases := map[string]mib.Tree{
		"reserved conformance arc": treeOf(t, "Conf/ 100"),
		"notifications arc":        treeOf(t, "Zero/ 0"),
		"hotset objects arc":       treeOf(t, "Hotset/ 14", "Hotset/total/ 14.0"),
		"orphan":                   treeOf(t, "Mem/ 2", "Mem/Real/free 2.1.2"),
		"duplicate":                treeOf(t, "Mem/ 2", "Mem/a 2.1", "Mem/b 2.1"),
		"path and id disagree":     treeOf(t, "Mem/ 2", "Mem/Real/a 2.1"),
		"statistic at the top":     treeOf(t, "free 3"),
	}
	for name, tree := range cases {
		if _, err := mib.Generate(tree, mib.Options{}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	for _, name := range []string{"bad-name", "A" + strings.Repeat("B", 55) + "-MIB"} {
		if _, err := mib.Generate(treeOf(t, "Mem/ 2"), mib.Options{Module: name}); err == nil {
			t.Errorf("module name %q accepted", name)
		}
	}
}

// A tree with its own Hotset context lends its node to the notification
// objects instead of the module defining base.14 a second time.
func TestHotsetContextFromTheTree(t *testing.T) {
	m := generate(t, treeOf(t, "Hotset/ 14", "Hotset/count 14.1"), mib.Options{})
	if n := bytes.Count(m.Text, []byte("\nhotset OBJECT-IDENTITY")); n != 1 {
		t.Errorf("base.14 defined %d times", n)
	}
	if !strings.Contains(flat(m.Text), `"D (context Hotset/)."`) || !bytes.Contains(m.Text, []byte("::= { hotset 0 }")) {
		t.Error("the tree's Hotset context is not the parent of the notification objects")
	}
}

func TestModuleNameAndPrefix(t *testing.T) {
	m := generate(t, treeOf(t, "Mem/ 2", "Mem/free 2.1"), mib.Options{Module: "ACME-PERF-MIB"})
	for _, s := range []string{"ACME-PERF-MIB DEFINITIONS ::= BEGIN", "acmePerfMIB MODULE-IDENTITY", "acmePerfCompliance MODULE-COMPLIANCE", "acmePerfNotifications OBJECT-IDENTITY"} {
		if !bytes.Contains(m.Text, []byte(s)) {
			t.Errorf("module lacks %q", s)
		}
	}
}
