package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/derive"
	"github.com/perfagent/subagent/expr"
	"github.com/perfagent/subagent/hotset"
	"github.com/perfagent/subagent/internal/alarmcmd"
	"github.com/perfagent/subagent/mib/schema"
	"github.com/perfagent/subagent/spmi"
	"github.com/perfagent/subagent/traps"
)

// expressions evaluates the derived statistics and alarms at their
// interval; the alarms' events go out through the hotsets' notification
// path (hotsets.send: the trap destinations, the master, the log).
type expressions struct {
	eng      *derive.Engine
	hot      *hotsets
	log      *slog.Logger
	interval atomic.Int64 // time.Duration
	wake     chan struct{}
	errs     map[string]string // last error logged by name; only run's goroutine uses it
	defs     exprDefs
	maxRows  [2]atomic.Int64 // expressions.max_snmp_derived, max_snmp_alarms: for the control socket
	runner   *alarmcmd.Runner
	cmds     atomic.Pointer[alarmCommands]
}

// derivedDef parses and checks one derived statistic, from the
// configuration file, the control socket or derivedDefTable alike;
// errors name key.
func derivedDef(key string, d config.DerivedConf) (derive.Derived, error) {
	x, err := expr.Parse(d.Expr)
	if err != nil {
		return derive.Derived{}, fmt.Errorf("%s.expr: %q %w", key, d.Expr, err)
	}
	if d.Scale < 0 || d.Scale > 6 {
		return derive.Derived{}, fmt.Errorf("%s.scale: %d is not from 0 to 6", key, d.Scale)
	}
	out := derive.Derived{Name: d.Name, X: x, Descr: d.Description, Units: d.Units, Scale: uint8(d.Scale), Signed: d.Signed}
	if err := out.Validate(); err != nil {
		return out, fmt.Errorf("%s: %w", key, err)
	}
	return out, nil
}

// alarmDef is derivedDef for an alarm; for and keep absent (0) are 1.
func alarmDef(key string, a config.AlarmConf) (derive.Alarm, error) {
	x, err := expr.Parse(a.Expr)
	if err != nil {
		return derive.Alarm{}, fmt.Errorf("%s.expr: %q %w", key, a.Expr, err)
	}
	d := derive.Alarm{Name: a.Name, X: x, Rising: a.Rising, Falling: a.Falling, For: max(a.For, 1), Keep: max(a.Keep, 1),
		Severity: a.Severity, Cleared: a.Cleared, Frequency: a.Frequency, TrapNo: a.TrapNo}
	if a.For < 0 || a.Keep < 0 {
		d.For, d.Keep = a.For, a.Keep // refused by Validate, naming the field
	}
	if err := d.Validate(); err != nil {
		return d, fmt.Errorf("%s: %w", key, err)
	}
	if a.TrapNo != 0 { // its range; the other users are the caller's to add
		if err := schema.CheckTrapNumbers([]schema.TrapUser{{N: a.TrapNo, Kind: "alarm", Name: a.Name}}); err != nil {
			return d, spmierr.Errorf(spmierr.SiBadArgument, "%s.trap_no: %v", key, err)
		}
	}
	return d, nil
}

// derivedDefs turns the configuration's derived statistics into the
// engine's.
func derivedDefs(c *config.Config) ([]derive.Derived, error) {
	out := make([]derive.Derived, 0, len(c.Derived))
	for i, d := range c.Derived {
		v, err := derivedDef(fmt.Sprintf("derived[%d]", i), d)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// alarmDefs is derivedDefs for the alarms.
func alarmDefs(c *config.Config) ([]derive.Alarm, error) {
	out := make([]derive.Alarm, 0, len(c.Alarms))
	for i, a := range c.Alarms {
		v, err := alarmDef(fmt.Sprintf("alarms[%d]", i), a)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// checkExpressions checks the derived statistics and alarms together
// (names unique across both).
func checkExpressions(c *config.Config) error {
	ds, err := derivedDefs(c)
	if err != nil {
		return err
	}
	as, err := alarmDefs(c)
	if err != nil {
		return err
	}
	if _, err := commandCred(c, slog.New(slog.DiscardHandler)); err != nil {
		return err
	}
	if err := checkConfigTraps(c); err != nil {
		return err
	}
	return derive.Check(ds, as)
}

// initExpressions adds Derived, Alarm and Agent/expr and the reloader;
// after initHotsets, whose notification path the alarms take.
func (d *Daemon) initExpressions() error {
	if _, err := derivedDefs(d.cfg); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	if _, err := alarmDefs(d.cfg); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	x := &expressions{hot: d.hot, log: d.log.With("part", "expressions"), wake: make(chan struct{}, 1)}
	runner, err := newCommandRunner(d.cfg, x.log)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	x.runner = runner
	cmds := commandsOf(d.cfg)
	x.cmds.Store(&cmds)
	x.defs.confD, x.defs.confA = d.cfg.Derived, d.cfg.Alarms
	x.defs.snmpD = loadCreated(d.num, DerivedRecords, x.log, func(name string, c *config.DerivedConf) error {
		c.Name = name
		_, err := derivedDef(DerivedRecords, *c)
		return err
	})
	x.defs.snmpA = loadCreated(d.num, AlarmRecords, x.log, func(name string, c *config.AlarmConf) error {
		c.Name = name
		_, err := alarmDef(AlarmRecords, *c)
		return err
	})
	x.defs.dropDuplicates(x.log)
	d.dropRestoredTraps(&x.defs, x.log)
	ds, as, err := x.defs.allLocked()
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	eng, err := derive.New(ds, as, nil)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	x.eng = eng
	eng.Commands = func() [4]uint64 {
		c := x.runner.Counts()
		return [4]uint64{c.Run, c.Dropped, c.Killed, c.Failed}
	}
	x.interval.Store(int64(d.cfg.Expressions.Interval))
	x.applyMaxRows(d.cfg) // the tables come later, with the same limits
	d.expr = x
	d.h.Add(derive.Provider{E: eng, Numbering: d.num})
	d.h.Add(derive.AlarmProvider{E: eng})
	d.addAgentStats(eng.AgentStats)
	d.addReloader(Reloader{Name: "expressions", Check: func(c *config.Config) error {
		if err := checkExpressions(c); err != nil {
			return err
		}
		return d.checkReloadTraps(c) // with the rows created at run time
	}, Apply: x.apply})
	return nil
}

func (x *expressions) apply(c *config.Config) error {
	kept := 0
	err := x.define(nil, func() func() {
		oldD, oldA := x.defs.confD, x.defs.confA
		x.defs.confD, x.defs.confA = c.Derived, c.Alarms // a configured name hides a row created over SNMP
		return func() { x.defs.confD, x.defs.confA, kept = oldD, oldA, len(oldD)+len(oldA) }
	})
	x.applyMaxRows(c)
	if err != nil {
		return fmt.Errorf("derived statistics and alarms not reloaded, the %d configured before stay: %w", kept, err)
	}
	if err := x.applyCommands(c); err != nil {
		return err
	}
	x.interval.Store(int64(c.Expressions.Interval))
	select {
	case x.wake <- struct{}{}:
	default:
	}
	x.log.Info("derived statistics and alarms reloaded", "derived", len(c.Derived), "alarms", len(c.Alarms))
	return nil
}

// run evaluates at once (which reads the counters for the next rates)
// and then at every interval until ctx is done.
func (x *expressions) run(ctx context.Context, h *spmi.Hierarchy) error {
	defer x.runner.Stop() // no alarm command outlives the daemon
	select {              // the alarms' notifications need the hotsets' sender
	case <-ctx.Done():
		return nil
	case <-x.hot.ready:
	}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-x.wake:
			t.Reset(time.Duration(x.interval.Load()))
			continue
		case <-t.C:
		}
		x.evaluate(h)
		t.Reset(time.Duration(x.interval.Load()))
	}
}

// evaluate evaluates once on a fresh snapshot, then rebuilds Derived and
// Alarm (stable parts whose shape is the results) here, so that the tree
// serves the results before their notifications go out and no request
// waits for a rebuild (Agent/expr reads them live); the notification log
// is read again at the next request only when notifications went out.
func (x *expressions) evaluate(h *spmi.Hierarchy) {
	evs, trs := x.eng.Evaluate(h.FreshWithin(hotset.ValuesWait))
	h.Fresh()
	log := x.log
	for _, tr := range trs {
		log.Info("alarm state", "alarm", tr.Alarm, "instance", tr.Instance, "from", tr.From.String(), "to", tr.To.String(),
			"value", derive.FormatValue(tr.Value))
	}
	for _, ev := range evs {
		x.runCommand(ev)
		if ev.Cleared && !ev.Alarm.Cleared {
			continue
		}
		n, err := AlarmNotification(x.hot.base, ev, time.Since(x.hot.start))
		if err != nil {
			log.Error("alarm notification not built", "alarm", ev.Alarm.Name, "err", err)
			continue
		}
		x.hot.send(n)
	}
	if len(evs) > 0 {
		h.Invalidate() // the next read serves NotifLog with them (an evaluation without events leaves requests be)
	}
	x.logErrors()
}

// logErrors logs an expression's evaluation error once when it appears
// or changes (a path that matches nothing, with the nearest that does),
// and once when it clears.
func (x *expressions) logErrors() {
	if x.errs == nil {
		x.errs = map[string]string{}
	}
	errs := x.eng.Errors()
	for name, err := range errs {
		if msg := err.Error(); x.errs[name] != msg {
			x.log.Warn("expression error", "name", name, "err", msg)
			x.errs[name] = msg
		}
	}
	for name := range x.errs {
		if errs[name] == nil {
			x.log.Info("expression evaluates again", "name", name)
			delete(x.errs, name)
		}
	}
}

// AlarmNotification is the notification of an alarm event: alarmRaised
// (base.0.32770), or alarmTrapN (base.0.N) for an alarm with trap number
// N, or alarmCleared (base.0.32771), with the objects of
// schema.AlarmRaised in order.
func AlarmNotification(base asn1tree.OID, ev derive.Event, uptime time.Duration) (traps.Notification, error) {
	nt := schema.AlarmRaised
	switch {
	case ev.Cleared:
		nt = schema.AlarmCleared
	case ev.Alarm.TrapNo > 0:
		nt = schema.AlarmTrap(uint32(ev.Alarm.TrapNo))
	}
	n := traps.Notification{Enterprise: base, Specific: int(nt.Arc[1]), Uptime: uptime}
	cond := ev.Alarm.Condition()
	if len(cond) > 255 {
		cond = cond[:252] + "..."
	}
	bs, err := nt.Bind(base, asn1tree.Str(ev.Alarm.Name), asn1tree.Str(ev.Instance), asn1tree.Str(derive.FormatValue(ev.Value)),
		asn1tree.Int(int32(ev.Alarm.Severity)), asn1tree.Str(cond))
	if err != nil {
		return n, err
	}
	for _, b := range bs {
		n.Vars = append(n.Vars, traps.VarBind{OID: b.OID, Value: b.Value})
	}
	return n, nil
}
