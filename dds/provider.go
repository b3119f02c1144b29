package dds

import (
	"fmt"

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

// Collect implements spmi.Provider. It takes the published view (no lock)
// and copies each supplier's values in one consistent read (values.go);
// it never waits for a supplier or its socket.
func (p *Provider) Collect(b *spmi.Builder) error {
	root, err := b.Context(nil, &spmi.CxDesc{Name: Root, Descr: rootDescr, ASN: RootASN})
	if err != nil {
		return err
	}
	view := *p.reg.view.Load()
	vals := p.values(view, b.Now())
	read := map[*supplier]int{}
	defer func() {
		if b.Background() {
			return // the daemon's own refresh is nobody's read
		}
		for sup, n := range read {
			sup.noteRead(b.Now(), n)
		}
	}()
	for i := range view {
		v := &view[i]
		parent := root
		if v.parent != Root {
			if parent = b.Lookup(v.parent); parent == nil {
				continue // its parent was refused
			}
		}
		cx, err := b.Context(parent, &spmi.CxDesc{Name: v.name, Descr: v.descr, ASN: v.asn, Inst: v.inst.Spmi()})
		if err != nil {
			b.Fail(sourceOf(v), err)
			continue
		}
		if len(v.stats) > 0 {
			read[v.sup] += p.stats(b, cx, v, vals.cx[i])
		}
	}
	for sup, err := range vals.faults {
		b.Fail(supSource(sup), err)
	}
	if len(vals.faults) > 0 {
		p.reg.notifyFault()
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

// stats adds v's statistics with the values read for them (NoValue where
// none). It returns how many have a value.
func (p *Provider) stats(b *spmi.Builder, cx *spmi.Node, v *cxView, vals []spmi.Value) int {
	n := 0
	for i := range v.stats {
		s := &v.stats[i]
		x := spmi.NoValue
		if i < len(vals) {
			x = vals[i]
		}
		if x.OK() {
			n++
		}
		d := &spmi.StatDesc{Name: s.Name, Descr: s.Descr, ASN: s.ASN, Min: s.Min, Max: s.Max,
			Val: s.ValType.Spmi(), Data: s.DataType.Presented()}
		if d.Data == spmi.SiFloat {
			d.Scale = 3
		}
		// The supplier's high scale value says how large a level gets.
		d.Wide = !spmi.FitsGauge32(d.Max, d.Scale)
		if err := b.Stat(cx, d, x); err != nil {
			b.Fail(sourceOf(v), err)
		}
	}
	return n
}
