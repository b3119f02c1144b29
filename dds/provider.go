package dds

import (
	"fmt"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/spmi"
)

// rootDescr describes the DDS context (spmi.ASNDDS, docs/TREE.md).
const rootDescr = "Dynamic Data Suppliers"

// Provider serves the DDS context and every live supplier's contexts and
// statistics, reading values from the mapped files at Collect time.
type Provider struct{ reg *registry }

// Name implements spmi.Provider.
func (p *Provider) Name() string { return ddswire.Root }

// Shape implements spmi.StableProvider: the DDS part of the tree is
// rebuilt only when the registrations change (each change publishes a new
// view); values are live, read from the mapped files when asked for.
func (p *Provider) Shape() any { return p.reg.view.Load() }

// Collect implements spmi.Provider. It takes the published view (no lock)
// and adds every context, and its statistics as a block of live ones of
// its supplier, described by the registry's shared descriptions; it never
// waits for a supplier or its socket.
func (p *Provider) Collect(b *spmi.Builder) error {
	root, err := b.Context(nil, &spmi.CxDesc{Name: ddswire.Root, Descr: rootDescr, ASN: spmi.ASNDDS})
	if err != nil {
		return err
	}
	view := *p.reg.view.Load()
	srcs := map[*supplier]*liveSup{}
	for i := range view {
		v := &view[i]
		parent := root
		if v.parent != ddswire.Root {
			if parent = b.Lookup(v.parent); parent == nil {
				continue // its parent was refused
			}
		}
		cx, err := b.Context(parent, &spmi.CxDesc{Name: v.name, Descr: v.descr, ASN: v.asn, Inst: v.inst})
		if err != nil {
			b.Fail(sourceOf(v), err)
			continue
		}
		if v.stats == nil || v.sup == nil {
			continue
		}
		src := srcs[v.sup]
		if src == nil {
			src = &liveSup{sup: v.sup, reg: p.reg}
			srcs[v.sup] = src
		}
		block(b, cx, v, src)
	}
	return nil
}

func sourceOf(v *cxView) string {
	if v.sup == nil {
		return "dds:" + v.path
	}
	return supSource(v.sup)
}

func supSource(sup *supplier) string {
	return fmt.Sprintf("dds:%s:pid %d", sup.vendor.Path(), sup.peer.PID)
}

// block adds v's statistics as fields of src: the next v.stats.len()
// ones, in the order of v.stats (by ASN number).
func block(b *spmi.Builder, cx *spmi.Node, v *cxView, src *liveSup) {
	first := src.n
	if uint64(first)+uint64(v.stats.len()) >= 1<<32 { // src.n would wrap
		b.Fail(sourceOf(v), spmierr.Errorf(spmierr.SiCallocFailed, "context %q: a supplier's statistics are numbered with 32 bits", v.path))
		return
	}
	if err := b.LiveBlock(cx, v.stats.blk, src, first); err != nil {
		b.Fail(sourceOf(v), err)
		return
	}
	src.cxs = append(src.cxs, liveCx{stats: v.stats, id: v.id, first: first, base: v.base})
	src.n += uint32(v.stats.len())
	src.maxID = max(src.maxID, v.id)
}
