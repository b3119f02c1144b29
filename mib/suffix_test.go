package mib_test

import (
	"errors"
	"os"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/mib"
	"github.com/perfagent/subagent/spmi"
)

// suffix is the last-resort collision suffix (docs/MIB.md, Descriptors).
var suffix = regexp.MustCompile(`\b[a-z][A-Za-z0-9]*R[0-9]+x[0-9][0-9x]*Z*\b`)

// The shipped module's names are chosen by the rules, never by the
// last-resort suffix: in the file and in what the reference tree gives.
func TestNoSuffixInTheShippedModule(t *testing.T) {
	have, err := os.ReadFile(shippedFile)
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Compact(suffix.FindAllString(string(have), -1)); len(got) > 0 {
		t.Errorf("%s has suffixed descriptors: %v", shippedFile, got)
	}
	m, err := mib.Generate(referenceTree(t), mib.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Compact(suffix.FindAllString(string(m.Text), -1)); len(got) > 0 {
		t.Errorf("the reference tree's module has suffixed descriptors: %v", got)
	}
}

// rulesTree has what the naming rules settle: PagSp's own totals beside
// the columns of its rows' table, and hotset rows whose columns meet the
// notification objects' names.
func rulesTree(t *testing.T) *spmi.Snapshot {
	t.Helper()
	b := spmi.NewBuilder(testBase, nil, time.Unix(0, 0))
	var err error
	must := func(n *spmi.Node, e error) *spmi.Node { err = errors.Join(err, e); return n }
	q := func(name string, asn uint32) spmiwire.StatDesc {
		return spmiwire.StatDesc{Name: name, Descr: name, ASN: asn, Max: 10, Val: ddswire.SiQuantity}
	}
	pag := must(b.Context(nil, &spmi.CxDesc{Name: "PagSp", Descr: "Paging spaces", ASN: 3, Inst: ddswire.SiCfgInst}))
	err = errors.Join(err, b.Stats(pag, []spmiwire.StatDesc{q("size", 1), q("free", 2), q("%free", 3), q("count", 4)}, nil))
	for i, dev := range []string{"sda3", "sdb1"} {
		in := must(b.Instance(pag, &spmi.CxDesc{Descr: "Paging space"}, dev, "/dev/"+dev, uint32(i+5)))
		err = errors.Join(err, b.Stats(in, []spmiwire.StatDesc{q("size", 11), q("used", 12), q("free", 13), q("%free", 14)}, nil))
	}
	hot := must(b.Context(nil, &spmi.CxDesc{Name: "Hotset", Descr: "Hotsets", ASN: 14, Inst: ddswire.SiCfgInst}))
	in := must(b.Instance(hot, &spmi.CxDesc{Descr: "Hotset"}, "queues", "trap 1", 3))
	err = errors.Join(err, b.Stats(in, []spmiwire.StatDesc{q("stat", 1), q("threshold", 2), q("severity", 6)}, nil))
	if err != nil {
		t.Fatal(err)
	}
	return b.Finish()
}

func TestNamingRulesPickReadableNames(t *testing.T) {
	tree := mib.FromSnapshot(rulesTree(t))
	m := generate(t, tree, mib.Options{})
	names := map[string]bool{}
	for _, o := range m.Objects {
		names[o.Name] = true
	}
	for _, want := range []string{
		// Rule 2: the context's statistics say Total, the columns keep the plain name.
		"pagSpTotalSize", "pagSpTotalFree", "pagSpTotalPctFree", "pagSpCount",
		"pagSpSize", "pagSpFree", "pagSpPctFree", "pagSpUsed",
		// Rule 3: the notification objects keep their names, the columns say Entry.
		"hotsetName", "hotsetThreshold", "hotsetSeverity",
		"hotsetEntryName", "hotsetEntryThreshold", "hotsetEntrySeverity", "hotsetStat", "hotsetDescr",
	} {
		if !names[want] {
			t.Errorf("no %s", want)
		}
	}
	byName := map[string]mib.Object{}
	for _, o := range m.Objects {
		byName[o.Name] = o
	}
	if p := byName["pagSpTotalSize"].Path; p != "PagSp/size" {
		t.Errorf("pagSpTotalSize is %q, want PagSp/size", p)
	}
	if got := slices.Compact(suffix.FindAllString(string(m.Text), -1)); len(got) > 0 {
		t.Errorf("suffixed descriptors: %v", got)
	}
	// The same names whatever the order of the items.
	rev := mib.Tree{Base: tree.Base, Items: slices.Clone(tree.Items)}
	slices.Reverse(rev.Items)
	if string(generate(t, rev, mib.Options{}).Text) != string(m.Text) {
		t.Error("the items in reverse order give another module")
	}
	// With every instance declared too, the rules still hold.
	if got := slices.Compact(suffix.FindAllString(string(generate(t, tree, mib.Options{Instances: true}).Text), -1)); len(got) > 0 {
		t.Errorf("suffixed descriptors with --instances: %v", got)
	}
}
