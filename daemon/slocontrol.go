package daemon

import (
	"math"
	"time"

	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/settable"
)

// sloStore is the control socket's control.SLOStore: what it creates are
// nonVolatile rows of sloDefTable, checked by the same checkObjective and
// admitted by the same sloDefs.admitLocked, within the same
// slo.max_snmp_objectives.
type sloStore struct{ d *Daemon }

const fromControlSLO = "objective" // the request's field

func (s sloStore) List() []spmiwire.ObjectiveDef {
	var out []spmiwire.ObjectiveDef
	s.d.slod.each(func(c config.ObjectiveConf, storage int) { out = append(out, objectiveDef(c, storage)) })
	return out
}

func objectiveDef(c config.ObjectiveConf, storage int) spmiwire.ObjectiveDef {
	return spmiwire.ObjectiveDef{Name: c.Name, Application: c.Application, Transaction: c.Transaction,
		Threshold: int64(c.Threshold / time.Microsecond), Target: c.Target, Window: int64(c.Window / time.Second), Storage: storageNames[storage]}
}

func (s sloStore) Create(o spmiwire.ObjectiveDef) error {
	// Bounded before the conversion: a duration out of int64 would wrap.
	if o.Threshold < 0 || o.Threshold > math.MaxInt64/int64(time.Microsecond) || o.Window < 0 || o.Window > math.MaxInt64/int64(time.Second) {
		return spmierr.Errorf(spmierr.SiBadArgument, "%s %q: threshold or window out of range", fromControlSLO, o.Name)
	}
	c := config.ObjectiveConf{Name: o.Name, Application: o.Application, Transaction: o.Transaction,
		Threshold: time.Duration(o.Threshold) * time.Microsecond, Target: o.Target, Window: time.Duration(o.Window) * time.Second}
	if err := s.d.checkObjective(fromControlSLO, c, settable.NonVolatile); err != nil {
		return err
	}
	return s.d.putObjective(fromControlSLO, o.Name, &created[config.ObjectiveConf]{conf: c, storage: settable.NonVolatile})
}

func (s sloStore) Delete(name string) error {
	x := s.d.slod
	x.mu.Lock()
	_, has := x.snmp[name]
	conf := x.configuredLocked(name)
	x.mu.Unlock()
	switch {
	case conf:
		return spmierr.Errorf(spmierr.SiLocked, "objective %q is the configuration file's: remove it there and reload (SIGHUP)", name)
	case !has:
		return spmierr.Errorf(spmierr.SiNotFound, "no objective %q created over SNMP or the control socket", name)
	}
	return s.d.putObjective(fromControlSLO, name, nil)
}
