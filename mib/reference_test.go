package mib_test

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/mib"
)

// withoutSwap is the reference tree as a host without swap has it: no
// paging space rows.
func withoutSwap(t *testing.T) mib.Tree {
	t.Helper()
	ref, err := mib.Reference()
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, it := range ref.Items {
		if it.Instance && strings.HasPrefix(it.Path, "PagSp/") && strings.Count(it.Path, "/") == 2 {
			rows = append(rows, it.Path)
		}
	}
	if len(rows) == 0 {
		t.Fatal("the reference tree has no paging space row")
	}
	out := mib.Tree{Base: ref.Base}
	for _, it := range ref.Items {
		if !slices.ContainsFunc(rows, func(r string) bool { return strings.HasPrefix(it.Path, r) }) {
			out.Items = append(out.Items, it)
		}
	}
	return out
}

// On a host without swap the merged module is the shipped one; the host's
// own tree alone would name PagSp/size pagSpSize, the shipped module's
// column.
func TestMergedModuleOfAHostWithoutSwapIsShipped(t *testing.T) {
	shipped, err := os.ReadFile(shippedFile)
	if err != nil {
		t.Fatal(err)
	}
	host := withoutSwap(t)
	alone := generate(t, host, mib.Options{})
	if bytes.Equal(alone.Text, shipped) || !strings.Contains(string(alone.Text), "\npagSpSize OBJECT-TYPE") {
		t.Fatalf("the tree without swap alone gives the shipped module: the test shows nothing")
	}
	m, renamed, err := mib.GenerateMerged(host, mib.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(renamed) > 0 || !bytes.Equal(m.Text, shipped) {
		t.Fatalf("merged module differs from the shipped one (renamed %v): %s", renamed, firstDiff(shipped, m.Text))
	}
}

func ddsItem(path string, rel ...uint32) mib.Item {
	_, name, _ := strings.Cut(strings.TrimSuffix(path, "/"), "/")
	return mib.Item{Path: path, Descr: "test " + name, Rel: asn1tree.OID(rel)}
}

func statItem(path, name string, asn uint32, rel ...uint32) mib.Item {
	return mib.Item{Path: path, Descr: "test " + name, Rel: asn1tree.OID(rel),
		Stat: &spmiwire.StatDesc{Name: name, Descr: "test " + name, Units: "things", ASN: asn, Val: ddswire.SiQuantity, Max: 100}}
}

// What a host adds (a DDS supplier) comes on top of the shipped module,
// which keeps every object; an addition that would rename a shipped
// object gives a module of another name.
func TestMergedModuleAddsAndRenamesOnlyUnderAnotherName(t *testing.T) {
	shipped := generate(t, mustReference(t), mib.Options{})
	host := withoutSwap(t)
	host.Items = append(host.Items, ddsItem("DDS/Acme/", 99, 7), statItem("DDS/Acme/pumps", "pumps", 1, 99, 7, 1))
	m, renamed, err := mib.GenerateMerged(host, mib.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(renamed) > 0 || m.Name != mib.DefaultModule || !strings.Contains(string(m.Text), "\nddsAcmePumps OBJECT-TYPE") {
		t.Fatalf("module %s with DDS/Acme/pumps: renamed %v, has ddsAcmePumps %v", m.Name, renamed, strings.Contains(string(m.Text), "ddsAcmePumps"))
	}
	if r := mib.Renamed(shipped, m); len(r) > 0 {
		t.Fatalf("the superset lacks shipped objects: %v", r)
	}
	// Mem/Real/Free beside Mem/Real/free: both take the suffix.
	host.Items = append(host.Items, statItem("Mem/Real/Free", "Free", 99, 2, 1, 99))
	m, renamed, err = mib.GenerateMerged(host, mib.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != mib.HostModule || !slices.Contains(renamed, "memRealFree") || !strings.Contains(string(m.Text), "\n"+mib.HostModule+" DEFINITIONS") {
		t.Fatalf("module %s, renamed %v: want %s naming memRealFree", m.Name, renamed, mib.HostModule)
	}
	if m, _, err = mib.GenerateMerged(host, mib.Options{Module: "ACME-PERF-MIB"}); err != nil || m.Name != "ACME-PERF-MIB" {
		t.Fatalf("--module ACME-PERF-MIB gave %v %v", m.Name, err)
	}
}

func mustReference(t *testing.T) mib.Tree {
	t.Helper()
	ref, err := mib.Reference()
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// A host whose hotsets have no feed or exception rows yet, under the
// template row's number, and whose disks are numbered otherwise: the
// template rows still give their tables' columns, moved to free numbers.
func TestMergedModuleKeepsTemplateRowsTheHostLacks(t *testing.T) {
	shipped, err := os.ReadFile(shippedFile)
	if err != nil {
		t.Fatal(err)
	}
	host := withoutSwap(t)
	var items []mib.Item
	for _, it := range host.Items {
		if strings.HasPrefix(it.Path, "Hotset/queues/feed/") || strings.HasPrefix(it.Path, "Hotset/queues/excp/") {
			continue
		}
		it.Path = strings.Replace(it.Path, "Hotset/queues/", "Hotset/hotpumps/", 1)
		it.Path = strings.Replace(it.Path, "Disk/sda/", "Disk/vdz/", 1) // sda's number
		items = append(items, it)
	}
	host.Items = items
	alone := generate(t, host, mib.Options{})
	if bytes.Equal(alone.Text, shipped) || strings.Contains(string(alone.Text), "\nhotsetFeedTable ") {
		t.Fatal("the host's tree alone declares the feed table: the test shows nothing")
	}
	ref, err := mib.Reference()
	if err != nil {
		t.Fatal(err)
	}
	merged := mib.Merge(ref, host)
	rels := map[string]string{}
	for _, it := range merged.Items {
		if p, dup := rels[it.Rel.String()]; dup {
			t.Fatalf("merged tree: %s and %s share %s", p, it.Path, it.Rel)
		}
		rels[it.Rel.String()] = it.Path
	}
	m, renamed, err := mib.GenerateMerged(host, mib.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(renamed) > 0 || !bytes.Equal(m.Text, shipped) {
		t.Fatalf("merged module (%s) differs from the shipped one (renamed %v): %s", m.Name, renamed, firstDiff(shipped, m.Text))
	}
}

// A tree under another base, or one host's module with its instances,
// cannot be the shipped module: it is named otherwise.
func TestMergedModuleOfAnotherBaseOrInstancesIsNamedOtherwise(t *testing.T) {
	host := withoutSwap(t)
	host.Base = asn1tree.OID{1, 3, 6, 1, 4, 1, 99999, 3}
	m, changed, err := mib.GenerateMerged(host, mib.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != mib.HostModule || len(changed) == 0 {
		t.Errorf("under %s: module %s, %d shipped objects changed; want %s", host.Base, m.Name, len(changed), mib.HostModule)
	}
	host = withoutSwap(t)
	if m, _, err = mib.GenerateMerged(host, mib.Options{Base: asn1tree.OID{1, 3, 6, 1, 3, 77}}); err != nil || m.Name != mib.HostModule {
		t.Errorf("--base-oid 1.3.6.1.3.77: module %v %v, want %s", m.Name, err, mib.HostModule)
	}
	if m, _, err = mib.GenerateMerged(host, mib.Options{Instances: true}); err != nil || m.Name != mib.HostModule || !strings.Contains(string(m.Text), "\ncpuCpu0Idle OBJECT-TYPE") {
		t.Errorf("--instances: module %v %v, want %s with cpuCpu0Idle", m.Name, err, mib.HostModule)
	}
	if m, _, err = mib.GenerateMerged(host, mib.Options{Include: []string{"CPU/"}}); err != nil || m.Name != mib.DefaultModule {
		t.Errorf("--include CPU/: module %v %v, want %s (a part of the shipped module)", m.Name, err, mib.DefaultModule)
	}
}
