package slo

import (
	"slices"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

// burnUnits: a burn rate of 1 spends the budget in exactly the window.
const burnUnits = "times the rate that spends the budget in the window"

var (
	sloCx  = spmi.CxDesc{Name: "SLO", Descr: "Service level objectives of ARM transactions", ASN: spmi.ASNSLO, Inst: ddswire.SiCfgInst}
	objTpl = spmi.CxDesc{Descr: "Service level objective"}

	// Statistics of SLO/<name>; the burn rates are numbered from burnASN
	// in the order of Periods.
	objStats = []spmiwire.StatDesc{
		{Name: "sli", Descr: "Good completions over the window, of all", ASN: 1, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 4, Units: "percent"},
		{Name: "budget", Descr: "Error budget left over the window (negative: overspent)", ASN: 2, Min: -100, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3, Units: "percent"},
		{Name: "burn5m", Descr: "Burn rate over 5 minutes (1: the budget lasts the window)", ASN: 3, Max: 20, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3, Units: burnUnits},
		{Name: "burn30m", Descr: "Burn rate over 30 minutes", ASN: 4, Max: 20, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3, Units: burnUnits},
		{Name: "burn1h", Descr: "Burn rate over 1 hour", ASN: 5, Max: 20, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3, Units: burnUnits},
		{Name: "burn6h", Descr: "Burn rate over 6 hours", ASN: 6, Max: 20, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3, Units: burnUnits},
		{Name: "burn1d", Descr: "Burn rate over 1 day", ASN: 7, Max: 20, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3, Units: burnUnits},
		{Name: "burn3d", Descr: "Burn rate over 3 days", ASN: 8, Max: 20, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3, Units: burnUnits},
		{Name: "good", Descr: "Good completions over the window", ASN: 9, Max: 1000, Val: ddswire.SiQuantity, Wide: true},
		{Name: "total", Descr: "Completions over the window", ASN: 10, Max: 1000, Val: ddswire.SiQuantity, Wide: true},
		{Name: "unclassified", Descr: "Completions not counted: too many thresholds on the transaction", ASN: 11, Max: 100, Val: ddswire.SiCounter},
		{Name: "application", Descr: "Pattern of ARM application names", ASN: 12, Data: spmiwire.SiText},
		{Name: "transaction", Descr: "Pattern of ARM transaction names", ASN: 13, Data: spmiwire.SiText},
		{Name: "threshold", Descr: "Latency threshold (0: availability)", ASN: 14, Max: 1000, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3, Units: "milliseconds"},
		{Name: "target", Descr: "Target ratio of good completions", ASN: 15, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 4, Units: "percent"},
		{Name: "window", Descr: "Window of the objective", ASN: 16, Max: 86400, Val: ddswire.SiQuantity, Units: "seconds"},
		{Name: "page", Descr: "1: the page burn-rate alarm is raised", ASN: 17, Max: 1, Val: ddswire.SiQuantity, Form: spmiwire.FormBool},
		{Name: "ticket", Descr: "1: the ticket burn-rate alarm is raised", ASN: 18, Max: 1, Val: ddswire.SiQuantity, Form: spmiwire.FormBool},
	}
)

// Provider serves SLO/<name> for every objective of a Set.
type Provider struct{ S *Set }

func (p Provider) Name() string { return "SLO" }

// Collect adds the objectives' state at the builder's time.
func (p Provider) Collect(b *spmi.Builder) error {
	top, err := b.Context(nil, &sloCx)
	if err != nil {
		return err
	}
	for _, st := range p.S.Statuses(b.Now()) {
		cx, err := b.Instance(top, &objTpl, st.Name, st.Application+"/"+st.Transaction, 0)
		if err != nil {
			return err
		}
		sli := spmiwire.Unmeasured("no completion in the window")
		if st.HasSLI {
			sli = spmiwire.Float(100 * st.SLI)
		}
		vals := []spmiwire.Value{sli, spmiwire.Float(100 * st.Budget)}
		for _, r := range st.Burn {
			vals = append(vals, spmiwire.Float(r))
		}
		vals = append(vals, spmiwire.Uint(st.Good), spmiwire.Uint(st.Total), spmiwire.Uint(st.Unclassified),
			spmiwire.Text(st.Application), spmiwire.Text(st.Transaction),
			spmiwire.Float(float64(st.Threshold)/1e6), spmiwire.Float(100*st.Target), spmiwire.Uint(uint64(st.Window.Seconds())),
			raised(st, "page"), raised(st, "ticket"))
		if err := b.Stats(cx, objStats, vals); err != nil {
			return err
		}
	}
	return nil
}

func raised(st Status, rule string) spmiwire.Value {
	if slices.Contains(st.Raised, rule) {
		return spmiwire.Uint(1)
	}
	return spmiwire.Uint(0)
}
