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
// and reads each value with one atomic load; it never waits for a
// supplier's socket.
func (p *Provider) Collect(b *spmi.Builder) error {
	root, err := b.Context(nil, &spmi.CxDesc{Name: Root, Descr: rootDescr, ASN: RootASN})
	if err != nil {
		return err
	}
	view := *p.reg.view.Load()
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
			read[v.sup] += p.stats(b, cx, v)
		}
	}
	return nil
}

func sourceOf(v *cxView) string {
	if v.sup == nil {
		return "dds:" + v.path
	}
	return fmt.Sprintf("dds:%s:pid %d", v.sup.vendor.Path(), v.sup.pid)
}

// stats adds v's statistics with their current values; a fault gives
// NoValue and marks the supplier for removal. It returns the values read.
func (p *Provider) stats(b *spmi.Builder, cx *spmi.Node, v *cxView) int {
	vals := make([]spmi.Value, len(v.stats))
	sup := v.sup
	var ferr error
	if !sup.faulted.Load() {
		sup.area(func(area []byte) {
			for i := range v.stats {
				x, err := ReadValue(area, FieldOf(&v.stats[i], v.base))
				if err != nil {
					if spmi.CodeOf(err) == spmi.SiShmemFailed {
						ferr = err
						sup.faulted.Store(true)
						return
					}
					continue // cannot happen for a checked field
				}
				vals[i] = x
			}
		})
	}
	n := 0
	for _, x := range vals {
		if x.OK() {
			n++
		}
	}
	if ferr != nil {
		n = 0
		for i := range vals {
			vals[i] = spmi.NoValue
		}
		b.Fail(sourceOf(v), ferr)
		p.reg.notifyFault()
	}
	for i := range v.stats {
		s := &v.stats[i]
		d := &spmi.StatDesc{Name: s.Name, Descr: s.Descr, ASN: s.ASN, Min: s.Min, Max: s.Max,
			Val: s.ValType.Spmi(), Data: s.DataType.Presented()}
		if d.Data == spmi.SiFloat {
			d.Scale = 3
		}
		// The supplier's high scale value says how large a level gets.
		d.Wide = !spmi.FitsGauge32(d.Max, d.Scale)
		if err := b.Stat(cx, d, vals[i]); err != nil {
			b.Fail(sourceOf(v), err)
		}
	}
	return n
}
