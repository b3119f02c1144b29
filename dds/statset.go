package dds

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

// statSet is the immutable form of the statistics of one registered
// context or volatile template, made once at registration and shared by
// every instance of a template. The tree takes its descriptions as they
// are (spmi.Builder.LiveBlock shares them, it does not copy), values are
// decoded through its fields, and the registry's clash checks look
// statistics up in it: a context costs nothing per statistic of its own.
type statSet struct {
	blk    *spmi.Block
	fields []ddswire.Field // fields[j]: statistic j's source field, relative to the context's base
}

// newStatSet sorts stats (the registration's order, left as it is) by
// ASN number; nil when there are none. CheckInit has made the numbers and
// names unique; the tree's own checks (spmi.NewBlock) name what it
// refuses.
func newStatSet(stats []ddswire.Stat) (*statSet, error) {
	if len(stats) == 0 {
		return nil, nil
	}
	order := make([]int32, len(stats))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(x, y int32) int { return cmp.Compare(stats[x].ASN, stats[y].ASN) })
	ds := make([]spmiwire.StatDesc, len(stats))
	s := &statSet{fields: make([]ddswire.Field, len(stats))}
	for j, i := range order {
		ds[j] = statDesc(&stats[i])
		s.fields[j] = ddswire.FieldOf(&stats[i], 0)
	}
	var err error
	if s.blk, err = spmi.NewBlock(ds); err != nil {
		return nil, err
	}
	return s, nil
}

// statSets makes the sets of m's contexts (by index; the vendor
// context's is nil) and templates.
func statSets(m *ddswire.Init) (cxs, tmpls []*statSet, err error) {
	cxs, tmpls = make([]*statSet, len(m.Contexts)), make([]*statSet, len(m.Templates))
	for i := range m.Contexts {
		if cxs[i], err = newStatSet(m.Contexts[i].Stats); err != nil {
			return nil, nil, fmt.Errorf("context %s: %w", m.Contexts[i].Path, err)
		}
	}
	for i := range m.Templates {
		if tmpls[i], err = newStatSet(m.Templates[i].Stats); err != nil {
			return nil, nil, fmt.Errorf("template %s: %w", m.Templates[i].Path, err)
		}
	}
	return cxs, tmpls, nil
}

// statDesc is how statistic s is served.
func statDesc(s *ddswire.Stat) spmiwire.StatDesc {
	d := spmiwire.StatDesc{Name: s.Name, Descr: s.Descr, ASN: s.ASN, Min: s.Min, Max: s.Max,
		Val: s.ValType, Data: presented(s.DataType)}
	if d.Data == spmiwire.SiFloat {
		d.Scale = 3
	}
	// The supplier's high scale value says how large a level gets.
	d.Wide = !spmi.FitsGauge32(d.Max, d.Scale)
	return d
}

// len is the number of statistics.
func (s *statSet) len() int {
	if s == nil {
		return 0
	}
	return s.blk.Len()
}

// hasName reports whether a statistic is named name.
func (s *statSet) hasName(name string) bool { return s != nil && s.blk.Index(name) >= 0 }

// hasASN reports whether a statistic is numbered asn.
func (s *statSet) hasASN(asn uint32) bool { return s != nil && s.blk.IndexASN(asn) >= 0 }
