package mib_test

import (
	"errors"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/mib"
	"github.com/perfagent/subagent/spmi"
)

// rowColumnsTree has a table of each kind: Vol, whose description repeats
// its statistic mount; Pid, named by its number and described by its
// statistic name (spmi.CxDesc.NameIsNumber, DescrStat); Dev with both
// columns.
func rowColumnsTree(t *testing.T) *spmi.Snapshot {
	t.Helper()
	b := spmi.NewBuilder(testBase, nil, time.Unix(0, 0))
	var err error
	must := func(n *spmi.Node, e error) *spmi.Node { err = errors.Join(err, e); return n }
	text := func(name string, asn uint32) spmiwire.StatDesc {
		return spmiwire.StatDesc{Name: name, Descr: name, ASN: asn, Val: ddswire.SiQuantity, Data: spmiwire.SiText}
	}
	size := spmiwire.StatDesc{Name: "size", Descr: "Size", ASN: 2, Max: 10, Val: ddswire.SiQuantity}
	vol := must(b.Context(nil, &spmi.CxDesc{Name: "Vol", Descr: "Volumes", ASN: 11, Inst: ddswire.SiCfgInst, DescrStat: "mount"}))
	in := must(b.Instance(vol, &spmi.CxDesc{Descr: "Volume"}, "srv_data", "/srv/data", 1))
	err = errors.Join(err, b.Stats(in, []spmiwire.StatDesc{text("mount", 1), size}, []spmiwire.Value{spmiwire.Text("/srv/data"), spmiwire.Uint(3)}))
	pid := must(b.Context(nil, &spmi.CxDesc{Name: "Pid", Descr: "Processes", ASN: 12, Inst: ddswire.SiContInst, NameIsNumber: true, DescrStat: "name"}))
	in = must(b.Instance(pid, &spmi.CxDesc{Descr: "Process"}, "1187", "java", 1187))
	err = errors.Join(err, b.Stats(in, []spmiwire.StatDesc{text("name", 1), size}, []spmiwire.Value{spmiwire.Text("java"), spmiwire.Uint(4)}))
	dev := must(b.Context(nil, &spmi.CxDesc{Name: "Dev", Descr: "Devices", ASN: 13, Inst: ddswire.SiCfgInst}))
	in = must(b.Instance(dev, &spmi.CxDesc{Descr: "Device"}, "vda", "Block device", 1))
	err = errors.Join(err, b.Stats(in, []spmiwire.StatDesc{size}, []spmiwire.Value{spmiwire.Uint(5)}))
	if err != nil {
		t.Fatal(err)
	}
	return b.Finish()
}

// A table leaves out the name and description columns that would repeat
// the index or a statistic, in what the daemon serves and in the module
// (from the snapshot and from a peek alike); its rows are labelled by the
// statistic the description repeats.
func TestRepeatingColumnsAreLeftOut(t *testing.T) {
	s := rowColumnsTree(t)
	fromPeek, err := spmi.Peek(s, "")
	if err != nil {
		t.Fatal(err)
	}
	peekTree, err := mib.FromEntries(fromPeek)
	if err != nil {
		t.Fatal(err)
	}
	for what, tree := range map[string]mib.Tree{"snapshot": mib.FromSnapshot(s), "peek": peekTree} {
		m := generate(t, tree, mib.Options{})
		names := map[string]bool{}
		for _, o := range m.Objects {
			names[o.Name] = true
		}
		for name, want := range map[string]bool{
			"volName": true, "volDescr": false, "volMount": true,
			"pidName": true, "pidInstName": false, "pidDescr": false, "pidInstDescr": false, "pidIndex": true,
			"devName": true, "devDescr": true,
		} {
			if names[name] != want {
				t.Errorf("%s: %s declared %v, want %v", what, name, names[name], want)
			}
		}
		labels := map[string]string{}
		for _, tb := range m.Tables {
			labels[tb.Name] = tb.Label
		}
		if labels["volTable"] != "volMount" || labels["pidTable"] != "" || labels["devTable"] != "devName" {
			t.Errorf("%s: labels %v, want volMount, none (the index) and devName", what, labels)
		}
	}

	// Served: columns 2 and 3 only where declared.
	entry := func(arc uint32) asn1tree.OID { return testBase.Append(spmi.TableEntry(0, asn1tree.OID{arc})...) }
	served := map[string]bool{}
	a := s.Answer()
	for o, _, ok := a.Search(testBase, false, nil); ok; o, _, ok = a.Search(o, false, nil) {
		served[o.String()] = true
	}
	for cell, want := range map[string]bool{
		entry(11).Append(spmi.ColName, 1).String():                        true,
		entry(11).Append(spmi.ColDescr, 1).String():                       false,
		entry(11).Append(spmi.ColumnOffset+1, 1).String():                 true,
		entry(12).Append(spmi.ColName, 1187).String():                     false,
		entry(12).Append(spmi.ColDescr, 1187).String():                    false,
		entry(12).Append(spmi.ColumnOffset+1, 1187).String():              true,
		entry(13).Append(spmi.ColName, 1).String():                        true,
		entry(13).Append(spmi.ColDescr, 1).String():                       true,
		testBase.Append(spmi.TableEntry(0, asn1tree.OID{13})...).String(): false,
	} {
		if served[cell] != want {
			t.Errorf("cell %s served %v, want %v", cell, served[cell], want)
		}
	}
	for _, o := range []asn1tree.OID{entry(11).Append(spmi.ColDescr, 1), entry(12).Append(spmi.ColName, 1187)} {
		if a.Defines(o) {
			t.Errorf("%s is defined (noSuchInstance), want no such object", o)
		}
	}
}
