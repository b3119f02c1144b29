package rtimearm

import (
	"fmt"
	"strings"
	"time"

	"github.com/perfagent/subagent/client/armring"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

// Root is the path of RTime/ARM (13.1: spmi.ASNRTime, spmi.ASNRTimeARM).
const Root = "RTime/ARM"

var (
	armCx = spmi.CxDesc{Name: "ARM", Descr: "Application response measurement (ARM 2.0)", ASN: spmi.ASNRTimeARM, Inst: ddswire.SiContInst, Named: true}
	appCx = spmi.CxDesc{Descr: "ARM application", Inst: ddswire.SiContInst, Named: true, RowName: "tran"}
)

// Statistics of RTime/ARM itself. Applications are numbered from the
// first number after these, and numbers are kept across upgrades: a new
// statistic of RTime/ARM would take an application's number on hosts
// that had one. New statistics of the ARM server go under Agent/arm.
var armStats = []spmiwire.StatDesc{
	{Name: "procs", Descr: "Processes registered with the ARM library", ASN: 1, Max: 100, Val: ddswire.SiQuantity},
	{Name: "errors", Descr: "Entries and records refused from ARM processes", ASN: 2, Max: 100, Val: ddswire.SiCounter},
	{Name: "badbuffers", Descr: "ARM data buffers refused by the libraries", ASN: 3, Max: 100, Val: ddswire.SiCounter},
	{Name: "unmeasured", Descr: "Instances the libraries could not measure", ASN: 4, Max: 100, Val: ddswire.SiCounter},
	{Name: "refused", Descr: "Registrations refused", ASN: 5, Max: 100, Val: ddswire.SiCounter},
}

// Statistics of a transaction: the PTX seven, then ours.
var tranStats = []spmiwire.StatDesc{
	{Name: "resptime", Descr: "Last response time of a successful transaction", ASN: 1, Max: 1000, Val: ddswire.SiQuantity, Units: "milliseconds"},
	{Name: "respavg", Descr: "Weighted average response time of successful transactions", ASN: 2, Max: 1000, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3, Units: "milliseconds"},
	{Name: "count", Descr: "Successful transactions", ASN: 3, Max: 100, Val: ddswire.SiCounter},
	{Name: "aborted", Descr: "Aborted transactions", ASN: 4, Max: 100, Val: ddswire.SiCounter},
	{Name: "failed", Descr: "Failed transactions", ASN: 5, Max: 100, Val: ddswire.SiCounter},
	{Name: "respmax", Descr: "Maximum response time of successful transactions", ASN: 6, Max: 1000, Val: ddswire.SiQuantity, Units: "milliseconds"},
	{Name: "respmin", Descr: "Minimum response time of successful transactions", ASN: 7, Max: 1000, Val: ddswire.SiQuantity, Units: "milliseconds"},
	{Name: "resp50", Descr: "Median response time over the window", ASN: 8, Max: 1000, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3, Units: "milliseconds"},
	{Name: "resp90", Descr: "90th percentile of the response time over the window", ASN: 9, Max: 1000, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3, Units: "milliseconds"},
	{Name: "resp99", Descr: "99th percentile of the response time over the window", ASN: 10, Max: 1000, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3, Units: "milliseconds"},
	{Name: "rate", Descr: "Completed transactions per second over the window", ASN: 11, Max: 1000, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 2, Units: "per second"},
	{Name: "inflight", Descr: "Instances started and not yet stopped", ASN: 12, Max: 100, Val: ddswire.SiQuantity},
	{Name: "lost", Descr: "Instances lost: ring full, process or daemon gone", ASN: 13, Max: 100, Val: ddswire.SiCounter},
	{Name: "correlated", Descr: "Instances started with a parent's correlator", ASN: 14, Max: 100, Val: ddswire.SiCounter},
	{Name: "parent", Descr: "Parent of the last correlated instance", ASN: 15, Data: spmiwire.SiText},
	{Name: "detail", Descr: "Transaction detail of the first registration", ASN: 16, Data: spmiwire.SiText},
}

var quantiles = []float64{0.5, 0.9, 0.99}

// Provider serves RTime/ARM from a Registry.
type Provider struct{ reg *Registry }

// Provider returns the registry's spmi.Provider.
func (r *Registry) Provider() *Provider { return &Provider{reg: r} }

// Name is the provider's name.
func (p *Provider) Name() string { return Root }

// Collect drains every process, then adds RTime/ARM with one instance per
// application and, under it, one per transaction.
func (p *Provider) Collect(b *spmi.Builder) error {
	r := p.reg
	r.DrainAll()
	r.mu.Lock()
	defer r.mu.Unlock()
	rt, err := b.RTime()
	if err != nil {
		return err
	}
	arm, err := b.Context(rt, &armCx)
	if err != nil {
		return err
	}
	if err := b.Stats(arm, armStats, []spmiwire.Value{spmiwire.Uint(uint64(len(r.procs))), spmiwire.Uint(r.errs),
		spmiwire.Uint(r.badBuf), spmiwire.Uint(r.noSlot), spmiwire.Uint(r.refused)}); err != nil {
		return err
	}
	inflight := r.inflightByTran()
	now := b.Now()
	for _, a := range r.sortedApps() {
		an, err := b.Instance(arm, &appCx, a.key, a.descr, 0)
		if b.Unnumbered(Root+" numbering", err) { // this application only
			continue
		}
		if err != nil {
			return err
		}
		for _, t := range a.order {
			// Instances cannot hold instances: a transaction is a context
			// of its application, numbered in the registry's Numbering.
			asn, err := r.num.Assign(Root+"/"+a.key, t.key, nil)
			if err != nil {
				b.Fail(Root+" numbering", err) // this transaction only
				continue
			}
			tn, err := b.Context(an, &spmi.CxDesc{Name: t.key, Descr: t.descr, ASN: asn})
			if err != nil {
				return err
			}
			if err := b.Stats(tn, tranStats, t.values(now, inflight[t])); err != nil {
				return err
			}
			if err := t.addMetrics(b, tn, now); err != nil {
				return err
			}
		}
	}
	if err := r.collectCalls(b, rt); err != nil {
		return err
	}
	return nil // the hierarchy saves the numbering once the refresh is done
}

// Delete implements spmi.Deleter for RTime/ARM/<app>: the application and
// its transactions leave the tree and the limits at once; their numbers
// are kept, so if a live process posts for it again it comes back where
// it was.
func (p *Provider) Delete(path string) (bool, error) {
	parts := strings.Split(path, "/")
	if len(parts) < 3 || parts[0] != "RTime" || parts[1] != "ARM" {
		return false, nil
	}
	if len(parts) > 3 {
		return false, spmierr.Errorf(spmierr.SiBadArgument, "%s: only a whole application, %s/%s, can be deleted", path, Root, parts[2])
	}
	if !p.reg.DeleteApp(parts[2]) {
		return false, spmierr.Errorf(spmierr.SiNotFound, "no ARM application %q", parts[2])
	}
	p.reg.log.Info("arm: application deleted", "app", parts[2])
	return true, nil
}

func (r *Registry) inflightByTran() map[*tran]int64 {
	m := map[*tran]int64{}
	for _, p := range r.procs {
		for i, pt := range p.trans {
			if pt != nil {
				m[pt.t] += p.inflight(i)
			}
		}
	}
	return m
}

func (t *tran) values(now time.Time, inflight int64) []spmiwire.Value {
	v := make([]spmiwire.Value, len(tranStats))
	if t.count > 0 {
		v[0], v[1], v[5], v[6] = spmiwire.Uint(t.resptime), spmiwire.Float(t.respavg), spmiwire.Uint(t.respmax), spmiwire.Uint(t.respmin)
	}
	v[2], v[3], v[4] = spmiwire.Uint(t.count), spmiwire.Uint(t.aborted), spmiwire.Uint(t.failed)
	var q [3]float64
	if t.win != nil && t.win.quantiles(now, quantiles, q[:]) {
		v[7], v[8], v[9] = spmiwire.Float(q[0]), spmiwire.Float(q[1]), spmiwire.Float(q[2])
	}
	rate := 0.0
	if t.win != nil {
		rate = t.win.rate(now)
	}
	v[10] = spmiwire.Float(rate)
	v[11] = spmiwire.Int(inflight)
	v[12], v[13] = spmiwire.Uint(t.lost), spmiwire.Uint(t.correlated)
	v[14], v[15] = spmiwire.Text(t.parent), spmiwire.Text(t.detail)
	return v
}

// addMetrics adds the application-defined metrics: field i (1..6) at
// 20+4(i-1)+1.. : counters as their total and their sum over the window;
// gauges as last, then avg, min, max over the window; ids as last; the
// string field at 45.
func (t *tran) addMetrics(b *spmi.Builder, tn *spmi.Node, now time.Time) error {
	for i, typ := range t.types {
		if typ == 0 {
			continue
		}
		m := &t.metrics[i]
		name := t.names[i]
		if name == "" {
			name = fmt.Sprintf("Metric #%d", i+1)
		}
		base := uint32(20 + 4*i)
		short := fmt.Sprintf("metric%d", i+1)
		var win agg
		if t.win != nil && i < armring.NumMetrics {
			win = t.win.field(now, i)
		}
		var ds []spmiwire.StatDesc
		var vs []spmiwire.Value
		switch typ {
		case armring.Counter32, armring.Counter64, armring.CntrDivr32:
			// The total is a counter; the window's sum a 64-bit quantity
			// (at ASN base+2, where a gauge has its avg), 0 when empty.
			total := spmiwire.StatDesc{Name: short, Descr: name, ASN: base + 1, Max: 100, Val: ddswire.SiCounter}
			sum := spmiwire.StatDesc{Name: short + "sum", Descr: descrSfx(name, "sum"), ASN: base + 2, Max: 100, Val: ddswire.SiQuantity, Wide: true}
			if typ == armring.CntrDivr32 {
				total.Data, total.Scale = spmiwire.SiFloat, 3
				sum.Data, sum.Scale = spmiwire.SiFloat, 3
				vs = append(vs, spmiwire.Float(m.total), spmiwire.Float(win.sum))
			} else {
				vs = append(vs, spmiwire.Uint(uint64(m.total)), spmiwire.Uint(uint64(win.sum)))
			}
			ds = append(ds, total, sum)
		case armring.Gauge32, armring.Gauge64, armring.GaugeDivr32:
			// Gauge32 and GaugeDivr32 are signed 32-bit: Integer32 on the
			// wire; Gauge64 needs 64 bits (CounterBasedGauge64, unsigned:
			// a negative value reads 0).
			for k, sfx := range []string{"", "avg", "min", "max"} {
				d := spmiwire.StatDesc{Name: short + sfx, Descr: descrSfx(name, sfx), ASN: base + 1 + uint32(k),
					Min: -100, Max: 100, Val: ddswire.SiQuantity}
				if sfx == "avg" || typ == armring.GaugeDivr32 {
					d.Data, d.Scale = spmiwire.SiFloat, 3
				}
				if typ == armring.Gauge64 {
					d.Min, d.Wide = 0, true
				}
				ds = append(ds, d)
			}
			vs = make([]spmiwire.Value, len(ds))
			if m.hasLast {
				vs[0] = spmiwire.Float(m.last)
			}
			if win.n > 0 {
				vs[1], vs[2], vs[3] = spmiwire.Float(win.sum/float64(win.n)), spmiwire.Float(win.min), spmiwire.Float(win.max)
			}
		case armring.NumericID32, armring.NumericID64:
			ds = append(ds, spmiwire.StatDesc{Name: short, Descr: name, ASN: base + 1, Max: 100, Val: ddswire.SiQuantity, Wide: true})
			if m.seen {
				vs = append(vs, spmiwire.Uint(m.lastID))
			}
		default: // String8, String32
			asn := base + 1
			if i == armring.NumMetrics {
				asn, short = 45, "string"
			}
			ds = append(ds, spmiwire.StatDesc{Name: short, Descr: name, ASN: asn, Data: spmiwire.SiText})
			if m.seen {
				vs = append(vs, spmiwire.Text(m.text))
			}
		}
		if err := b.Stats(tn, ds, vs); err != nil {
			return err
		}
	}
	return nil
}

func descrSfx(name, sfx string) string {
	if sfx != "" {
		name += " (" + sfx + ")"
	}
	return armring.Descr(name, spmiwire.MaxDescr)
}
