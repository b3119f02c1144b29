package daemon

import (
	"time"

	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/settable"
)

// exprStore is the control socket's control.ExprStore: what it creates
// are nonVolatile rows of derivedDefTable and alarmDefTable, checked by
// the same checkCreated and admitted by the same admitLocked, within the
// same expressions.max_snmp_*.
type exprStore struct{ d *Daemon }

const fromControl = "def" // the request's field

var storageNames = map[int]string{settable.ReadOnly: "readOnly", settable.NonVolatile: "nonVolatile", settable.Volatile: "volatile"}

func (s exprStore) List() []spmiwire.ExprDef {
	var out []spmiwire.ExprDef
	for _, alarm := range []bool{false, true} {
		for _, r := range (exprRows{d: s.d, alarm: alarm}).Rows() {
			def := spmiwire.ExprDef{Name: r.Name, Storage: storageNames[r.Storage]}
			if alarm {
				c, _ := rowAlarm(&r) // rising and falling were numbers
				def.Kind, def.Expr, def.For, def.Keep, def.Severity, def.Rising, def.Falling, def.Cleared =
					"alarm", c.Expr, c.For, c.Keep, c.Severity, c.Rising, c.Falling, c.Cleared
				def.Frequency, def.TrapNo = int(c.Frequency/time.Second), c.TrapNo
			} else {
				c := rowDerived(&r)
				def.Kind, def.Expr, def.Description, def.Units, def.Scale, def.Signed = "derived", c.Expr, c.Description, c.Units, c.Scale, c.Signed
			}
			out = append(out, def)
		}
	}
	return out
}

func (s exprStore) Create(def spmiwire.ExprDef) error {
	x := s.d.expr
	switch def.Kind {
	case "derived":
		c := config.DerivedConf{Name: def.Name, Expr: def.Expr, Description: def.Description, Units: def.Units, Scale: def.Scale, Signed: def.Signed}
		if err := s.d.checkCreated(fromControl, &c, nil, settable.NonVolatile); err != nil {
			return err
		}
		return putCreated(x, fromControl, x.defs.snmpD, DerivedRecords, def.Name, &created[config.DerivedConf]{conf: c, storage: settable.NonVolatile}, s.d.num)
	case "alarm":
		c := config.AlarmConf{Name: def.Name, Expr: def.Expr, Rising: def.Rising, Falling: def.Falling, For: def.For, Keep: def.Keep,
			Severity: def.Severity, Cleared: def.Cleared, Frequency: time.Duration(def.Frequency) * time.Second, TrapNo: def.TrapNo}
		if err := s.d.checkCreated(fromControl, nil, &c, settable.NonVolatile); err != nil {
			return err
		}
		return s.d.putAlarm(fromControl, c, settable.NonVolatile)
	}
	return spmierr.Errorf(spmierr.SiBadArgument, "kind %q: want derived or alarm", def.Kind)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (s exprStore) Delete(kind, name string) error {
	x := s.d.expr
	x.defs.mu.Lock()
	_, isD := x.defs.snmpD[name]
	_, isA := x.defs.snmpA[name]
	conf := x.defs.configuredLocked(name)
	x.defs.mu.Unlock()
	switch {
	case conf:
		return spmierr.Errorf(spmierr.SiLocked, "%s %q is the configuration file's: remove it there and reload (SIGHUP)", kind, name)
	case kind == "derived" && isD:
		return putCreated[config.DerivedConf](x, fromControl, x.defs.snmpD, DerivedRecords, name, nil, s.d.num)
	case kind == "alarm" && isA:
		return putCreated[config.AlarmConf](x, fromControl, x.defs.snmpA, AlarmRecords, name, nil, s.d.num)
	case kind != "derived" && kind != "alarm":
		return spmierr.Errorf(spmierr.SiBadArgument, "kind %q: want derived or alarm", kind)
	}
	return spmierr.Errorf(spmierr.SiNotFound, "no %s %q created over SNMP or the control socket", kind, name)
}
