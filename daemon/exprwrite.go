package daemon

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/derive"
	"github.com/perfagent/subagent/mib/schema"
	"github.com/perfagent/subagent/settable"
)

// derivedDefTable (base.ASNWritable.3) and alarmDefTable (.4): the
// derived statistics and alarms, configured (readOnly) and created over
// SNMP, checked by derivedDef and alarmDef as the configuration file is.

func derivedRow(c config.DerivedConf, storage int) settable.Row {
	return settable.Row{Name: c.Name, Status: settable.Active, Storage: storage, Vals: []asn1tree.Value{
		asn1tree.Str(c.Expr), asn1tree.Str(c.Description), asn1tree.Str(c.Units), asn1tree.Int(int32(c.Scale)), truthValue(c.Signed)}}
}

func rowDerived(r *settable.Row) config.DerivedConf {
	return config.DerivedConf{Name: r.Name, Expr: r.Vals[0].Str, Description: r.Vals[1].Str, Units: r.Vals[2].Str,
		Scale: int(r.Vals[3].Signed()), Signed: r.Vals[4].Signed() == truthTrue}
}

func floatText(f *float64) string {
	if f == nil {
		return ""
	}
	return strconv.FormatFloat(*f, 'g', -1, 64)
}

func alarmRow(c config.AlarmConf, storage int) settable.Row {
	return settable.Row{Name: c.Name, Status: settable.Active, Storage: storage, Vals: []asn1tree.Value{
		asn1tree.Str(c.Expr), asn1tree.Int(int32(max(c.For, 1))), asn1tree.Int(int32(max(c.Keep, 1))), asn1tree.Int(int32(c.Severity)),
		asn1tree.Str(floatText(c.Rising)), asn1tree.Str(floatText(c.Falling)), truthValue(c.Cleared), asn1tree.Int(int32(c.Frequency / time.Second)),
		asn1tree.Int(int32(c.TrapNo))}}
}

// rowAlarm reads an alarm row; rising and falling are decimal text, empty
// for none.
func rowAlarm(r *settable.Row) (config.AlarmConf, error) {
	c := config.AlarmConf{Name: r.Name, Expr: r.Vals[0].Str, For: int(r.Vals[1].Signed()), Keep: int(r.Vals[2].Signed()),
		Severity: int(r.Vals[3].Signed()), Cleared: r.Vals[6].Signed() == truthTrue, Frequency: time.Duration(r.Vals[7].Signed()) * time.Second,
		TrapNo: int(r.Vals[8].Signed())}
	cols := schema.AlarmDefTable.Columns
	for i, p := range []**float64{&c.Rising, &c.Falling} {
		s := strings.TrimSpace(r.Vals[4+i].Str)
		if s == "" {
			continue
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return c, fmt.Errorf("%s: %q is not a decimal number", cols[4+i].Name, s)
		}
		*p = &f
	}
	return c, nil
}

// exprRows is the Source of both tables: kind picks one.
type exprRows struct {
	d     *Daemon
	alarm bool
}

func (s exprRows) Rows() []settable.Row {
	x := &s.d.expr.defs
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []settable.Row
	if s.alarm {
		for _, c := range x.confA {
			out = append(out, alarmRow(c, settable.ReadOnly))
		}
	} else {
		for _, c := range x.confD {
			out = append(out, derivedRow(c, settable.ReadOnly))
		}
	}
	// Those a configured name hides are left out, as the engine leaves them.
	for _, c := range x.snmpD {
		if !s.alarm && !x.configuredLocked(c.conf.Name) {
			out = append(out, derivedRow(c.conf, c.storage))
		}
	}
	for _, c := range x.snmpA {
		if s.alarm && !x.configuredLocked(c.conf.Name) {
			out = append(out, alarmRow(c.conf, c.storage))
		}
	}
	return out
}

// Check judges a row as the configuration file's entry would be.
func (s exprRows) Check(_ *settable.Row, r *settable.Row) error {
	if s.alarm {
		c, err := rowAlarm(r)
		if err != nil {
			return err
		}
		return s.d.checkCreated(schema.AlarmDefTable.Name, nil, &c, r.Storage)
	}
	c := rowDerived(r)
	return s.d.checkCreated(schema.DerivedDefTable.Name, &c, nil, r.Storage)
}

// checkCreated checks a derived statistic (dc) or an alarm (ac) created
// over SNMP or the control socket (from): the configuration file's
// checks, the record a nonVolatile one keeps, an alarm's trap number
// against every hotset's and alarm's, and admitLocked as things stand
// (putCreated admits it again under the lock of its insert). An error
// wrapping settable.ErrFull says there is no room.
func (d *Daemon) checkCreated(from string, dc *config.DerivedConf, ac *config.AlarmConf, storage int) error {
	var name string
	var err error
	if ac != nil {
		name = ac.Name
		if _, err = alarmDef(from, *ac); err == nil {
			_, err = record(ac, storage)
		}
	} else {
		name = dc.Name
		if _, err = derivedDef(from, *dc); err == nil {
			_, err = record(dc, storage)
		}
		// A statistic without a number would be left out of the tree.
		if err == nil {
			if err = d.num.Room(derive.DerivedCx.Name, name); err != nil {
				err = fmt.Errorf("%w: %w", settable.ErrFull, err)
			}
		}
	}
	if err != nil {
		return err
	}
	if ac != nil {
		if err := d.checkAlarmTrap(ac); err != nil {
			return spmierr.Errorf(spmierr.SiDuplicate, "%s %q: trap_no: %v", from, name, err)
		}
	}
	x := d.expr
	x.defs.mu.Lock()
	defer x.defs.mu.Unlock()
	return x.admitLocked(from, ac != nil, name)
}

func (s exprRows) Put(r *settable.Row) error {
	x := s.d.expr
	if s.alarm {
		c, err := rowAlarm(r)
		if err != nil {
			return err
		}
		return s.d.putAlarm(schema.AlarmDefTable.Name, c, r.Storage)
	}
	c := rowDerived(r)
	return putCreated(x, schema.DerivedDefTable.Name, x.defs.snmpD, DerivedRecords, r.Name, &created[config.DerivedConf]{conf: c, storage: r.Storage}, s.d.num)
}

// putAlarm commits an alarm created at run time, its trap number checked
// again under Daemon.traps: another path may have taken it since.
func (d *Daemon) putAlarm(from string, c config.AlarmConf, storage int) error {
	d.traps.Lock()
	defer d.traps.Unlock()
	if err := d.checkAlarmTrap(&c); err != nil {
		return spmierr.Errorf(spmierr.SiDuplicate, "%q: trap_no: %v", c.Name, err)
	}
	x := d.expr
	return putCreated(x, from, x.defs.snmpA, AlarmRecords, c.Name, &created[config.AlarmConf]{conf: c, storage: storage}, d.num)
}

func (s exprRows) Remove(name string) error {
	x := s.d.expr
	if s.alarm {
		return putCreated[config.AlarmConf](x, schema.AlarmDefTable.Name, x.defs.snmpA, AlarmRecords, name, nil, s.d.num)
	}
	return putCreated[config.DerivedConf](x, schema.DerivedDefTable.Name, x.defs.snmpD, DerivedRecords, name, nil, s.d.num)
}

// exprTables builds derivedDefTable and alarmDefTable under base.
func (d *Daemon) exprTables(base asn1tree.OID) []*settable.Table {
	var out []*settable.Table
	for i, t := range []*schema.WritableTable{schema.DerivedDefTable, schema.AlarmDefTable} {
		max, key := d.cfg.Expressions.MaxSNMPDerived, "expressions.max_snmp_derived"
		if i == 1 {
			max, key = d.cfg.Expressions.MaxSNMPAlarms, "expressions.max_snmp_alarms"
		}
		tab := &settable.Table{Name: t.Name, Entry: append(base.Clone(), t.Arc, 1), Cols: tableCols(t.Columns), Added: tableCols(t.Added),
			MaxKey: t.IndexMax, CheckKey: func(name string) error { return derive.CheckName("name", name) },
			Src: exprRows{d: d, alarm: i == 1}, MaxRows: max, MaxRowsSetting: key, MaxWaiting: d.cfg.SNMPSet.MaxWaitingRows, PendingTTL: d.cfg.SNMPSet.WaitingLifetime}
		d.expr.defs.tables[i] = tab
		out = append(out, tab)
	}
	return out
}
