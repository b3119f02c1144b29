package daemon

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/hotset"
	"github.com/perfagent/subagent/mib/schema"
)

// The trap numbers of hotsets and alarms, from wherever they come (the
// configuration file, a reload, hotsetDefTable, alarmDefTable, the
// control socket), are judged together by schema.CheckTrapNumbers: this
// file lists the users each path would leave, and Daemon.traps makes a
// change's check and its commit one step, so that two paths never both
// take a number.

// hotsetTrapUsers are the hotsets that send numbered notifications: the
// configured ones, then those created over SNMP whose names conf does
// not hide (as allLocked).
func hotsetTrapUsers(conf []hotset.Def, snmp map[string]snmpHot) []schema.TrapUser {
	var out []schema.TrapUser
	taken := map[string]bool{}
	add := func(d hotset.Def, from string) {
		if d.Excp.Traps() && d.TrapNo > 0 {
			out = append(out, schema.TrapUser{N: d.TrapNo, Kind: "hotset", Name: d.Name, From: from})
		}
	}
	for i, d := range conf {
		taken[d.Name] = true
		add(d, fmt.Sprintf("hotsets[%d]", i))
	}
	for _, name := range slices.Sorted(maps.Keys(snmp)) {
		if !taken[name] {
			add(snmp[name].def, schema.HotsetDefTable.Name)
		}
	}
	return out
}

// alarmTrapUsers is hotsetTrapUsers for the alarms: a configured derived
// statistic or alarm hides a row created over SNMP or the control socket.
func alarmTrapUsers(confD []config.DerivedConf, confA []config.AlarmConf, snmp map[string]created[config.AlarmConf]) []schema.TrapUser {
	var out []schema.TrapUser
	taken := map[string]bool{}
	for _, d := range confD {
		taken[d.Name] = true
	}
	for i, a := range confA {
		taken[a.Name] = true
		if a.TrapNo != 0 {
			out = append(out, schema.TrapUser{N: a.TrapNo, Kind: "alarm", Name: a.Name, From: fmt.Sprintf("alarms[%d]", i)})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(snmp)) {
		if a := snmp[name].conf; !taken[name] && a.TrapNo != 0 {
			out = append(out, schema.TrapUser{N: a.TrapNo, Kind: "alarm", Name: name, From: schema.AlarmDefTable.Name})
		}
	}
	return out
}

// checkConfigTraps checks the trap numbers of a configuration file's
// hotsets and alarms; invalid hotsets are the hotsets' check to report.
func checkConfigTraps(c *config.Config) error {
	hot, err := hotsetDefs(c)
	if err != nil {
		return nil
	}
	return schema.CheckTrapNumbers(append(hotsetTrapUsers(hot, nil), alarmTrapUsers(c.Derived, c.Alarms, nil)...))
}

// trapsNow lists the users the running daemon has, with the hotsets'
// rows created at run time replaced by hot and the alarms' by alarms
// when not nil (a change that would leave them).
func (d *Daemon) trapsNow(hot map[string]snmpHot, alarms map[string]created[config.AlarmConf], c *config.Config) []schema.TrapUser {
	hs := d.hot
	hs.defs.Lock()
	conf := hs.conf
	if c != nil {
		conf, _ = hotsetDefs(c) // checked
	}
	if hot == nil {
		hot = hs.snmp
	}
	users := hotsetTrapUsers(conf, hot)
	hs.defs.Unlock()
	if d.expr == nil {
		return users
	}
	x := &d.expr.defs
	x.mu.Lock()
	defer x.mu.Unlock()
	confD, confA := x.confD, x.confA
	if c != nil {
		confD, confA = c.Derived, c.Alarms
	}
	if alarms == nil {
		alarms = x.snmpA
	}
	return append(users, alarmTrapUsers(confD, confA, alarms)...)
}

// checkReloadTraps checks c's hotsets and alarms with the rows created
// at run time that c's names do not hide.
func (d *Daemon) checkReloadTraps(c *config.Config) error {
	return schema.CheckTrapNumbers(d.trapsNow(nil, nil, c))
}

// checkHotsetTrap checks the hotsets and alarms a hotset row created at
// run time would leave (h nil: the row removed).
func (d *Daemon) checkHotsetTrap(name string, h *snmpHot) error {
	d.hot.defs.Lock()
	rows := maps.Clone(d.hot.snmp)
	d.hot.defs.Unlock()
	if h == nil {
		delete(rows, name)
	} else {
		rows[name] = *h
	}
	return schema.CheckTrapNumbers(d.trapsNow(rows, nil, nil))
}

// checkAlarmTrap is checkHotsetTrap for an alarm created at run time.
func (d *Daemon) checkAlarmTrap(a *config.AlarmConf) error {
	x := &d.expr.defs
	x.mu.Lock()
	rows := maps.Clone(x.snmpA)
	x.mu.Unlock()
	rows[a.Name] = created[config.AlarmConf]{conf: *a}
	return schema.CheckTrapNumbers(d.trapsNow(nil, rows, nil))
}

// dropRestoredTraps leaves out, at start, the restored rows (nonVolatile,
// created at run time) whose trap numbers the configuration's hotsets and
// alarms, or an earlier row, send: a state file from before a change of
// the configuration. Hotsets' rows first, then alarms'. The records stay:
// the rows come back at a start whose configuration leaves them room.
func (d *Daemon) dropRestoredTraps(x *exprDefs, log *slog.Logger) {
	hs := d.hot
	hs.defs.Lock()
	kept := append(hotsetTrapUsers(hs.conf, nil), alarmTrapUsers(x.confD, x.confA, nil)...)
	var drop []string
	for _, u := range hotsetTrapUsers(hs.conf, hs.snmp) {
		if u.From != schema.HotsetDefTable.Name {
			continue
		}
		if err := schema.CheckTrapNumbers(append(kept, u)); err != nil {
			log.Error("hotset created over SNMP not restored", "hotset", u.Name, "err", err)
			drop = append(drop, u.Name)
			continue
		}
		kept = append(kept, u)
	}
	hs.defs.Unlock()
	for _, name := range drop {
		_ = hs.define(func() func() { // fewer hotsets: never refused
			old := hs.snmp[name]
			delete(hs.snmp, name)
			return func() { hs.snmp[name] = old }
		})
	}
	for _, u := range alarmTrapUsers(x.confD, x.confA, x.snmpA) {
		if u.From != schema.AlarmDefTable.Name {
			continue
		}
		if err := schema.CheckTrapNumbers(append(kept, u)); err != nil {
			log.Error("alarm created over SNMP not restored", "alarm", u.Name, "err", err)
			delete(x.snmpA, u.Name)
			continue
		}
		kept = append(kept, u)
	}
}
