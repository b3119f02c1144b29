package daemon

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"

	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/derive"
	"github.com/perfagent/subagent/settable"
	"github.com/perfagent/subagent/spmi"
)

// Where the numbering keeps the nonVolatile rows of derivedDefTable and
// alarmDefTable.
const (
	DerivedRecords = "SNMP/derivedDefTable"
	AlarmRecords   = "SNMP/alarmDefTable"
)

// created is a derived statistic or an alarm created over SNMP.
type created[T any] struct {
	conf    T
	storage int
}

// exprDefs are the definitions the engine evaluates: the configured ones
// and those created over SNMP, whose names the configured ones hide.
type exprDefs struct {
	mu     sync.Mutex
	confD  []config.DerivedConf
	confA  []config.AlarmConf
	snmpD  map[string]created[config.DerivedConf]
	snmpA  map[string]created[config.AlarmConf]
	tables [2]*settable.Table // derivedDefTable, alarmDefTable: for their limits; set by initWritable
}

// configuredLocked tells whether the configuration names a derived
// statistic or an alarm name.
func (x *exprDefs) configuredLocked(name string) bool {
	for _, d := range x.confD {
		if d.Name == name {
			return true
		}
	}
	for _, a := range x.confA {
		if a.Name == name {
			return true
		}
	}
	return false
}

// allLocked parses every definition: checked when it came in, so an error
// here is a bug the caller reports.
func (x *exprDefs) allLocked() ([]derive.Derived, []derive.Alarm, error) {
	var ds []derive.Derived
	var as []derive.Alarm
	for i, c := range x.confD {
		d, err := derivedDef(fmt.Sprintf("derived[%d]", i), c)
		if err != nil {
			return nil, nil, err
		}
		ds = append(ds, d)
	}
	for _, name := range slices.Sorted(maps.Keys(x.snmpD)) {
		if !x.configuredLocked(name) {
			d, err := derivedDef(DerivedRecords, x.snmpD[name].conf)
			if err != nil {
				return nil, nil, err
			}
			ds = append(ds, d)
		}
	}
	for i, c := range x.confA {
		a, err := alarmDef(fmt.Sprintf("alarms[%d]", i), c)
		if err != nil {
			return nil, nil, err
		}
		as = append(as, a)
	}
	for _, name := range slices.Sorted(maps.Keys(x.snmpA)) {
		if !x.configuredLocked(name) {
			a, err := alarmDef(AlarmRecords, x.snmpA[name].conf)
			if err != nil {
				return nil, nil, err
			}
			as = append(as, a)
		}
	}
	return ds, as, nil
}

// define is the one way the definitions change, as hotsets.define: admit
// (nil: none) judges the change under the lock that makes it, the engine
// gets them all before the lock is released; an error from the engine
// undoes the change.
func (x *expressions) define(admit func() error, change func() (undo func())) error {
	x.defs.mu.Lock()
	defer x.defs.mu.Unlock()
	if admit != nil {
		if err := admit(); err != nil {
			return err
		}
	}
	undo := change()
	ds, as, err := x.defs.allLocked()
	if err == nil {
		err = x.eng.Replace(ds, as)
	}
	if err != nil {
		undo()
		return err
	}
	return nil
}

// loadCreated reads the nonVolatile rows kept under parent; a damaged or
// invalid one is logged and left out.
func loadCreated[T any](num *spmi.Numbering, parent string, log *slog.Logger, check func(name string, c *T) error) map[string]created[T] {
	out := map[string]created[T]{}
	names, recs := num.Records(parent)
	for _, name := range names {
		var c T
		err := json.Unmarshal([]byte(recs[name]), &c)
		if err == nil {
			err = check(name, &c)
		}
		if err != nil {
			log.Error("row created over SNMP not restored", "table", parent, "name", name, "file", num.File(), "err", err)
			continue
		}
		out[name] = created[T]{conf: c, storage: settable.NonVolatile}
	}
	return out
}

// record is what the numbering keeps of a row (nonVolatile), or "".
func record[T any](c *T, storage int) (string, error) {
	if c == nil || storage != settable.NonVolatile {
		return "", nil
	}
	b, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	if len(b) > spmi.MaxRecordBytes {
		return "", fmt.Errorf("the row takes %d bytes, more than the %d kept of a nonVolatile row: shorten it or make it volatile", len(b), spmi.MaxRecordBytes)
	}
	return string(b), nil
}

// putCreated adds, replaces (c) or removes (nil) a row created over SNMP
// or the control socket (from) in m, the engine and the numbering's
// records, admitted by admitLocked under the lock of the change; an
// error leaves them as they were.
func putCreated[T any](x *expressions, from string, m map[string]created[T], parent, name string, c *created[T], num *spmi.Numbering) error {
	rec := ""
	var admit func() error
	if c != nil {
		var err error
		if rec, err = record(&c.conf, c.storage); err != nil {
			return err
		}
		admit = func() error {
			if err := x.admitLocked(from, parent == AlarmRecords, name); err != nil || parent != DerivedRecords {
				return err
			}
			// Numbered now, in the same admission (Check found room): a
			// statistic without a number would be left out of the tree.
			if _, err := num.Assign(derive.DerivedCx.Name, name, nil); err != nil {
				return fmt.Errorf("%w: %w", settable.ErrFull, err)
			}
			return nil
		}
	}
	err := x.define(admit, func() func() {
		old, had := m[name]
		if c == nil {
			delete(m, name)
		} else {
			m[name] = *c
		}
		return func() {
			if had {
				m[name] = old
			} else {
				delete(m, name)
			}
		}
	})
	if err != nil {
		return fmt.Errorf("%q: %w", name, err)
	}
	if num.SetRecord(parent, name, rec) {
		if err := num.Save(); err != nil {
			return fmt.Errorf("%q: %w", name, err)
		}
	}
	return nil // evaluated from the next interval on
}

// admitLocked is the one admission of a derived statistic (alarm false)
// or an alarm created over SNMP or the control socket (from): its name
// against the configuration's and the other kind's, and for a new name
// room under expressions.max_snmp_derived or max_snmp_alarms, counted as
// derivedDefTable and alarmDefTable count their rows. putCreated calls
// it under the lock of its insert, so that two creates at once cannot
// both take the last place. An error wrapping settable.ErrFull says
// there is no room.
func (x *expressions) admitLocked(from string, alarm bool, name string) error {
	d := &x.defs
	_, isD := d.snmpD[name]
	_, isA := d.snmpA[name]
	switch {
	case d.configuredLocked(name):
		return spmierr.Errorf(spmierr.SiDuplicate, "%s %q: the configuration file has a derived statistic or an alarm of this name", from, name)
	case alarm && isD:
		return spmierr.Errorf(spmierr.SiDuplicate, "%s %q: already the name of a derived statistic (Agent/expr names both)", from, name)
	case !alarm && isA:
		return spmierr.Errorf(spmierr.SiDuplicate, "%s %q: already the name of an alarm (Agent/expr names both)", from, name)
	case alarm && isA, !alarm && isD:
		return nil // a replacement takes no new place
	}
	held, key := visibleLocked(d, d.snmpD), "expressions.max_snmp_derived"
	if alarm {
		held, key = visibleLocked(d, d.snmpA), "expressions.max_snmp_alarms"
	}
	if limit := int(x.maxRows[b2i(alarm)].Load()); held >= limit {
		return fmt.Errorf("%w: %w", settable.ErrFull,
			spmierr.Errorf(spmierr.SiCallocFailed, "%s %q: %d created already, the most %s (%d) allows", from, name, held, key, limit))
	}
	return nil
}

// visibleLocked counts the rows of m no configured name hides: those the
// table serves and counts against its limit.
func visibleLocked[T any](d *exprDefs, m map[string]created[T]) int {
	n := 0
	for name := range m {
		if !d.configuredLocked(name) {
			n++
		}
	}
	return n
}

// applyMaxRows applies expressions.max_snmp_derived and max_snmp_alarms.
func (x *expressions) applyMaxRows(c *config.Config) {
	for i, n := range []int{c.Expressions.MaxSNMPDerived, c.Expressions.MaxSNMPAlarms} {
		x.maxRows[i].Store(int64(n))
		t := x.defs.tables[i]
		if t == nil {
			continue
		}
		if held := t.SetMaxRows(n); held > n {
			x.log.Warn("fewer rows allowed than were created over SNMP: they are kept, and no new row is created until fewer remain",
				"table", t.Name, "max", n, "rows", held)
		}
	}
}

// dropDuplicates leaves out a restored alarm named as a restored derived
// statistic (names are unique across both): a state file edited by hand.
func (x *exprDefs) dropDuplicates(log *slog.Logger) {
	for name := range x.snmpA {
		if _, ok := x.snmpD[name]; ok {
			log.Error("alarm created over SNMP not restored: a derived statistic has its name", "name", name)
			delete(x.snmpA, name)
		}
	}
}
