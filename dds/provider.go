package dds

import (
	"fmt"

	"github.com/perfagent/subagent/client/ddswire"

	"github.com/perfagent/subagent/spmi"
)

// DDS context numbers (docs/TREE.md).
const (
	RootASN   = 99
	rootDescr = "Dynamic Data Suppliers"
)

// Provider serves the DDS context and every live supplier's contexts and
// statistics, reading values from the mapped files at Collect time.
type Provider struct{ reg *registry }

// Name implements spmi.Provider.
func (p *Provider) Name() string { return Root }

// Shape implements spmi.StableProvider: the DDS part of the tree is
// rebuilt only when the registrations change (each change publishes a new
// view); values are live, read from the mapped files when asked for.
func (p *Provider) Shape() any { return p.reg.view.Load() }

// Collect implements spmi.Provider. It takes the published view (no lock)
// and adds every context, and each statistic as a live one of its
// supplier; it never waits for a supplier or its socket.
func (p *Provider) Collect(b *spmi.Builder) error {
	root, err := b.Context(nil, &spmi.CxDesc{Name: Root, Descr: rootDescr, ASN: RootASN})
	if err != nil {
		return err
	}
	view := *p.reg.view.Load()
	srcs := map[*supplier]*liveSup{}
	for i := range view {
		v := &view[i]
		parent := root
		if v.parent != Root {
			if parent = b.Lookup(v.parent); parent == nil {
				continue // its parent was refused
			}
		}
		cx, err := b.Context(parent, &spmi.CxDesc{Name: v.name, Descr: v.descr, ASN: v.asn, Inst: spmiInst(v.inst)})
		if err != nil {
			b.Fail(sourceOf(v), err)
			continue
		}
		if len(v.stats) == 0 || v.sup == nil {
			continue
		}
		src := srcs[v.sup]
		if src == nil {
			src = &liveSup{sup: v.sup, reg: p.reg}
			srcs[v.sup] = src
		}
		p.stats(b, cx, v, src)
	}
	return nil
}

func sourceOf(v *cxView) string {
	if v.sup == nil {
		return "dds:" + v.path
	}
	return supSource(v.sup)
}

func supSource(sup *supplier) string { return fmt.Sprintf("dds:%s:pid %d", sup.vendor.Path(), sup.pid) }

// stats adds v's statistics as live fields of src.
func (p *Provider) stats(b *spmi.Builder, cx *spmi.Node, v *cxView, src *liveSup) {
	for i := range v.stats {
		s := &v.stats[i]
		d := &spmi.StatDesc{Name: s.Name, Descr: s.Descr, ASN: s.ASN, Min: s.Min, Max: s.Max,
			Val: spmiValType(s.ValType), Data: presented(s.DataType)}
		if d.Data == spmi.SiFloat {
			d.Scale = 3
		}
		// The supplier's high scale value says how large a level gets.
		d.Wide = !spmi.FitsGauge32(d.Max, d.Scale)
		if err := b.LiveStat(cx, d, src, uint32(len(src.fields))); err != nil {
			b.Fail(sourceOf(v), err)
			continue
		}
		src.fields = append(src.fields, ddswire.FieldOf(s, v.base))
		src.cxIDs = append(src.cxIDs, v.id)
		src.maxID = max(src.maxID, v.id)
	}
}
