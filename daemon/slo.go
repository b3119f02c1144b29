package daemon

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/mib/schema"
	"github.com/perfagent/subagent/rtimearm"
	"github.com/perfagent/subagent/slo"
	"github.com/perfagent/subagent/traps"
)

// objectives are the service level objectives of the ARM transactions
// and where their counts are kept.
type objectives struct {
	set      *slo.Set
	file     string
	d        *Daemon
	interval atomic.Int64 // time.Duration between evaluations of the alarms
}

// sloObjectives translates the objectives: settings.
func sloObjectives(c []config.ObjectiveConf) []slo.Objective {
	out := make([]slo.Objective, 0, len(c))
	for _, o := range c {
		out = append(out, slo.Objective{Name: o.Name, Application: o.Application, Transaction: o.Transaction,
			Threshold: o.Threshold, Target: o.Target, Window: o.Window})
	}
	return out
}

// startObjectives makes the objectives of the configuration, restores
// their counts from the state directory, has reg classify for them and
// adds SLO to the tree. A state file that does not decode is moved aside
// (<file>.corrupt), logged, and the counts start afresh.
func (d *Daemon) startObjectives(reg *rtimearm.Registry) *objectives {
	d.slod.mu.Lock()
	o := &objectives{set: slo.NewSet(sloObjectives(d.slod.allLocked())), file: filepath.Join(d.cfg.StateDir, slo.StateFile), d: d}
	n, err := o.set.Load(o.file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		d.log.Error("slo: the saved counts are refused", "err", err)
		os.Rename(o.file, o.file+".corrupt")
	default:
		d.log.Info("slo: counts restored", "objectives", n, "file", o.file)
	}
	o.set.SetRules(sloRules(d.cfg.SLO))
	o.interval.Store(int64(d.cfg.SLO.Interval))
	reg.SetObjectives(o.set, nil)
	d.slod.apply = func(objs []slo.Objective) { reg.SetObjectives(o.set, func() { o.set.Reconfigure(objs) }) }
	d.slod.mu.Unlock()
	d.h.Add(slo.Provider{S: o.set})
	d.addReloader(Reloader{Name: "slo_alarms", Apply: func(c *config.Config) error {
		o.set.SetRules(sloRules(c.SLO))
		o.interval.Store(int64(c.SLO.Interval))
		return nil
	}})
	return o
}

// sloRules translates the slo: settings.
func sloRules(c config.SLOSettings) []slo.Rule {
	return []slo.Rule{
		{Name: "page", Factor: c.Page.Factor, Long: c.Page.Long, Short: c.Page.Short},
		{Name: "ticket", Factor: c.Ticket.Factor, Long: c.Ticket.Long, Short: c.Ticket.Short},
	}
}

// saveEvery is how often the counts are saved while the daemon runs.
const saveEvery = time.Minute

// run evaluates the alarms every slo.interval and saves the counts every
// saveEvery until ctx is done, then saves them once more.
func (o *objectives) run(ctx context.Context) {
	save := time.NewTicker(saveEvery)
	defer save.Stop()
	eval := time.NewTimer(time.Duration(o.interval.Load()))
	defer eval.Stop()
	for {
		select {
		case <-ctx.Done():
			o.save()
			return
		case <-save.C:
			o.save()
		case <-eval.C:
			o.evaluate(time.Now())
			eval.Reset(time.Duration(o.interval.Load()))
		}
	}
}

// evaluate raises and clears the burn-rate alarms at now: each change is
// logged and sent as the hotsets' notifications are (traps:
// destinations, the AgentX master, the notification log). It returns
// the changes.
func (o *objectives) evaluate(now time.Time) []slo.Event {
	hs := o.d.hot
	evs := o.set.Evaluate(now)
	for _, ev := range evs {
		n, err := SLONotification(hs.base, ev, time.Since(hs.start))
		if err != nil {
			hs.log.Error("slo notification not built", "err", err)
			continue
		}
		what := "slo alarm cleared"
		if ev.Raised {
			what = "slo alarm raised"
		}
		o.d.log.Warn(what, "objective", ev.Objective, "alarm", ev.Rule.Name, "factor", ev.Rule.Factor,
			"long", ev.Rule.Long, "long_burn", burnText(ev.LongBurn), "short", ev.Rule.Short, "short_burn", burnText(ev.Short))
		hs.send(n)
	}
	return evs
}

// burnText is a burn rate as the notifications carry it.
func burnText(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

// SLONotification is an alarm's sloBurnRaised or sloBurnCleared.
func SLONotification(base asn1tree.OID, ev slo.Event, uptime time.Duration) (traps.Notification, error) {
	def, no := schema.SLOBurnCleared, schema.SLOBurnClearedNo
	if ev.Raised {
		def, no = schema.SLOBurnRaised, schema.SLOBurnRaisedNo
	}
	bs, err := def.Bind(base, asn1tree.Str(ev.Objective), asn1tree.Str(ev.Rule.Name),
		asn1tree.Str(strconv.FormatFloat(ev.Rule.Factor, 'f', -1, 64)),
		asn1tree.Gauge(uint32(ev.Rule.Long/time.Second)), asn1tree.Gauge(uint32(ev.Rule.Short/time.Second)),
		asn1tree.Str(burnText(ev.LongBurn)), asn1tree.Str(burnText(ev.Short)))
	if err != nil {
		return traps.Notification{}, err
	}
	n := traps.Notification{Enterprise: base, Specific: int(no), Uptime: uptime}
	for _, b := range bs {
		n.Vars = append(n.Vars, traps.VarBind{OID: b.OID, Value: b.Value})
	}
	return n, nil
}

func (o *objectives) save() {
	if err := o.set.Save(o.file); err != nil {
		o.d.log.Error("slo: saving the counts", "err", err)
	}
}
