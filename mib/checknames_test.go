package mib

import (
	"strings"
	"testing"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
)

// checkNames is the last check before writing: whatever naming gave, a
// descriptor breaking a rule fails with its path.
func TestCheckNamesCatchesWhatNamingMissed(t *testing.T) {
	stat := &spmiwire.StatDesc{Name: "s", Val: ddswire.SiQuantity, Max: 1}
	tree := Tree{Base: asn1tree.MustParse("1.3.6.1.4.1.32473.1"), Items: []Item{
		{Path: "Mem/", Rel: asn1tree.OID{2}},
		{Path: "Mem/free", Rel: asn1tree.OID{2, 1}, Stat: stat},
		{Path: "Mem/used", Rel: asn1tree.OID{2, 2}, Stat: stat},
	}}
	cases := []struct {
		name, path, why string
		spoil           func(m *model)
	}{
		{"too long", "Mem/free", "longer than 64", func(m *model) { m.nodes[1].name = "m" + strings.Repeat("x", 64) }},
		{"hyphen", "Mem/free", "only letters and digits", func(m *model) { m.nodes[1].name = "mem-free" }},
		{"capital", "Mem/free", "lowercase letter", func(m *model) { m.nodes[1].name = "MemFree" }},
		{"same but for case", "Mem/used", `also that of "Mem/free"`, func(m *model) { m.nodes[2].name = "mEMFREE" }},
		{"an import", "Mem/used", "reserves", func(m *model) { m.nodes[2].name = "gauge32" }},
		{"the module's own", "Mem/", "reserves", func(m *model) { m.nodes[0].name = "subagentCompliance" }},
		{"a group", "Mem/", `also that of "Mem/used"`, func(m *model) { m.groups[0].name = "memUsed" }},
	}
	for _, c := range cases {
		m, err := build(tree, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.checkNames(); err != nil {
			t.Fatalf("before spoiling: %v", err)
		}
		c.spoil(m)
		err = m.checkNames()
		want := `mib: path "` + c.path + `" cannot become a valid descriptor: `
		if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: got %v, want %s... %s", c.name, err, want, c.why)
		}
	}
}

// Every name a module can import is reserved in smiReserved itself, so a
// path's descriptor does not depend on what else the tree imports.
func TestEveryImportIsReserved(t *testing.T) {
	tree := Tree{Base: asn1tree.MustParse("1.3.6.1.4.1.32473.1"), Items: []Item{{Path: "A/", Rel: asn1tree.OID{1}}}}
	for i, d := range []spmiwire.StatDesc{
		{Val: ddswire.SiCounter, Max: 1}, {Val: ddswire.SiQuantity, Max: 1, Wide: true},
		{Val: ddswire.SiQuantity, Data: spmiwire.SiText}, {Val: ddswire.SiQuantity, Max: 1, Data: spmiwire.SiFloat, Scale: 2},
		{Val: ddswire.SiQuantity, Min: -1, Max: 1}, {Val: ddswire.SiQuantity, Max: 1},
	} {
		d.Name = "s" + string(rune('a'+i))
		tree.Items = append(tree.Items, Item{Path: "A/" + d.Name, Rel: asn1tree.OID{1, uint32(i + 1)}, Stat: &d})
	}
	reserved := map[string]bool{}
	for _, s := range smiReserved {
		reserved[strings.ToLower(s)] = true
	}
	for _, base := range []string{"1.3.6.1.4.1.32473.1", "1.3.6.1.2.1.9", "1.3.6.1.3.1", "1.3.6.1.4.9", "1.3.6.1.2.9", "1.3.6.1.9"} {
		m, err := build(tree, Options{Base: asn1tree.MustParse(base)})
		if err != nil {
			t.Fatal(err)
		}
		var n int
		for _, f := range m.importList() {
			for _, name := range f.names {
				n++
				if !strings.Contains(name, "-") && !reserved[strings.ToLower(name)] {
					t.Errorf("%s from %s is imported but not in smiReserved", name, f.module)
				}
			}
		}
		// 18: Unsigned32, RowStatus, StorageType and TruthValue for the
		// writable tables (writable.go), which every module declares.
		if n != 18 {
			t.Errorf("base %s: %d imports, want 18: the tree should use every type", base, n)
		}
	}
}
