package daemon

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/rtimearm"
	"github.com/perfagent/subagent/slo"
)

// objectives are the service level objectives of the ARM transactions
// and where their counts are kept.
type objectives struct {
	set  *slo.Set
	file string
	d    *Daemon
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
	o := &objectives{set: slo.NewSet(sloObjectives(d.cfg.Objectives)), file: filepath.Join(d.cfg.StateDir, slo.StateFile), d: d}
	n, err := o.set.Load(o.file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		d.log.Error("slo: the saved counts are refused", "err", err)
		os.Rename(o.file, o.file+".corrupt")
	default:
		d.log.Info("slo: counts restored", "objectives", n, "file", o.file)
	}
	reg.SetObjectives(o.set, nil)
	d.h.Add(slo.Provider{S: o.set})
	d.AddReloader(Reloader{Name: "objectives", Apply: func(c *config.Config) error {
		reg.SetObjectives(o.set, func() { o.set.Reconfigure(sloObjectives(c.Objectives)) })
		return nil
	}})
	return o
}

// saveEvery is how often the counts are saved while the daemon runs.
const saveEvery = time.Minute

// run saves the counts every saveEvery until ctx is done, then once more.
func (o *objectives) run(ctx context.Context) {
	t := time.NewTicker(saveEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			o.save()
			return
		case <-t.C:
			o.save()
		}
	}
}

func (o *objectives) save() {
	if err := o.set.Save(o.file); err != nil {
		o.d.log.Error("slo: saving the counts", "err", err)
	}
}
