package mib

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/perfagent/subagent/asn1tree"
)

// referenceJSON is the reference tree the shipped module is made from
// (referenceTree in shipped_test.go), written by `make mib` beside it.
//
//go:embed reference.json
var referenceJSON []byte

// ReferenceFile is where `make mib` writes the reference tree, relative
// to this package.
const ReferenceFile = "reference.json"

// Reference returns the tree the shipped module describes: the same
// module on every host comes from it.
func Reference() (Tree, error) {
	var t Tree
	if err := json.Unmarshal(referenceJSON, &t); err != nil {
		return Tree{}, fmt.Errorf("the built-in reference tree: %w", err)
	}
	return t, nil
}

// EncodeReference writes t as Reference reads it: JSON, one item a line
// so that a change shows as the lines it changes.
func EncodeReference(t Tree) ([]byte, error) {
	var b bytes.Buffer
	base, err := json.Marshal(t.Base)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(&b, "{\"Base\":%s,\"Items\":[\n", base)
	for i, it := range t.Items {
		j, err := json.Marshal(it)
		if err != nil {
			return nil, err
		}
		b.Write(j)
		if i < len(t.Items)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]}\n")
	return b.Bytes(), nil
}

// Merge returns the reference tree under live's base with what live has
// beyond it, so that a module made from it declares every object of the
// shipped module under the same name whatever the host has (swap or not,
// any disks, hotsets with or without feed rows), and adds what only live
// serves (DDS suppliers, ARM applications' metrics). A node outside table
// rows that both have is the reference's. Rows only give their tables
// columns (and nested tables): the host's rows are all kept, and the
// reference's template rows too, but for a row the host has under the
// same path; a template row whose number a node of the host holds moves
// to a free number, as two nodes with one OID would be one object.
func Merge(ref, live Tree) Tree {
	refInst, liveInst := instanceSet(ref), instanceSet(live)
	livePaths, liveRels := map[string]bool{}, map[string]bool{}
	next := map[string]uint32{} // per context: above every row number either tree uses
	for _, tr := range []struct {
		t    Tree
		inst map[string]bool
	}{{live, liveInst}, {ref, refInst}} {
		for _, it := range tr.t.Items {
			if tr.inst[it.Path] && len(it.Rel) > 0 {
				p, _ := parentPath(it.Path)
				next[p] = max(next[p], it.Rel[len(it.Rel)-1]+1)
			}
		}
	}
	for _, it := range live.Items {
		livePaths[it.Path] = true
		liveRels[it.Rel.String()] = true
	}
	moved := map[string]asn1tree.OID{} // a template row's path: its new id
	out := Tree{Base: live.Base.Clone()}
	for _, it := range ref.Items {
		row := outerInstance(it.Path, refInst)
		switch {
		case row == "":
			if livePaths[it.Path] && !liveRels[it.Rel.String()] {
				continue // the host numbers it otherwise: the host's
			}
		case livePaths[row]:
			continue // the host has this row
		case it.Path == row && liveRels[it.Rel.String()]:
			p, _ := parentPath(row)
			id := it.Rel.Clone()
			id[len(id)-1] = next[p]
			next[p]++
			moved[row] = id
		}
		if id, ok := moved[row]; ok && row != "" {
			it.Rel = append(id.Clone(), it.Rel[len(id):]...)
		}
		out.Items = append(out.Items, it)
	}
	have := map[string]bool{}
	for _, it := range out.Items {
		have[it.Path] = true
	}
	for _, it := range live.Items {
		if !have[it.Path] {
			out.Items = append(out.Items, it)
		}
	}
	return out
}

// instanceSet holds the paths of a tree's instance contexts.
func instanceSet(t Tree) map[string]bool {
	s := map[string]bool{}
	for _, it := range t.Items {
		if !it.IsStat() && it.Instance {
			s[it.Path] = true
		}
	}
	return s
}

// outerInstance is the outermost instance context holding path (or path
// itself), "" when none does.
func outerInstance(path string, inst map[string]bool) string {
	for i := 0; i < len(path); i++ {
		if path[i] == '/' && inst[path[:i+1]] {
			return path[:i+1]
		}
	}
	if strings.HasSuffix(path, "/") && inst[path] {
		return path
	}
	return ""
}

// HostModule is the default name of a module that must differ from the
// shipped one: one that cannot keep every object of the shipped module
// under its name and OID (another base, an addition taking a shipped
// descriptor), or one host's module (Options.Instances).
const HostModule = "SUBAGENT-HOST-MIB"

// GenerateMerged generates the module of Merge(Reference(), live): the
// shipped module byte for byte where live holds nothing beyond the
// reference tree under the shipped base, otherwise the same module plus
// what live adds. Where a shipped object would get another descriptor or
// OID, the module must differ from the shipped one in more than additions:
// it is named HostModule unless opts names it, and changed lists the
// shipped objects concerned. With opts.Instances the module is live's
// alone, one host's, named HostModule unless opts names it.
func GenerateMerged(live Tree, opts Options) (m *Module, changed []string, err error) {
	if opts.Instances {
		if opts.Module == "" {
			opts.Module = HostModule
		}
		m, err = Generate(live, opts)
		return m, nil, err
	}
	ref, err := Reference()
	if err != nil {
		return nil, nil, err
	}
	merged := Merge(ref, live)
	if m, err = Generate(merged, opts); err != nil {
		return nil, nil, err
	}
	so := opts
	so.Base = nil // the shipped module's own base
	shipped, err := Generate(ref, so)
	if err != nil {
		return nil, nil, fmt.Errorf("the built-in reference tree: %w", err)
	}
	if changed = Renamed(shipped, m); len(changed) > 0 && opts.Module == "" {
		opts.Module = HostModule
		m, err = Generate(merged, opts)
	}
	return m, changed, err
}

// Renamed lists the objects of a that b lacks under the same descriptor
// and OID.
func Renamed(a, b *Module) []string {
	have := map[string]string{}
	for _, o := range b.Objects {
		have[o.Name] = o.OID.String()
	}
	var out []string
	for _, o := range a.Objects {
		if have[o.Name] != o.OID.String() {
			out = append(out, o.Name)
		}
	}
	return out
}
