package daemon

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/mib/schema"
	"github.com/perfagent/subagent/settable"
	"github.com/perfagent/subagent/slo"
)

// SLORecords is where the numbering keeps the nonVolatile rows of
// sloDefTable.
const SLORecords = "SNMP/sloDefTable"

// sloDefs are the objectives measured: the configured ones and those
// created over SNMP or the control socket, whose names the configured
// ones hide.
type sloDefs struct {
	mu      sync.Mutex
	conf    []config.ObjectiveConf
	snmp    map[string]created[config.ObjectiveConf]
	apply   func([]slo.Objective) // set by startObjectives; nil when ARM is not served
	table   *settable.Table
	maxRows atomic.Int64 // slo.max_snmp_objectives, for the control socket
}

func (x *sloDefs) configuredLocked(name string) bool {
	return slices.ContainsFunc(x.conf, func(c config.ObjectiveConf) bool { return c.Name == name })
}

// allLocked is every objective measured, the configured ones first: at
// most slo.MaxObjectives (what the state file holds), so that created
// ones beyond, after a reload added configured ones, are left out.
func (x *sloDefs) allLocked() []config.ObjectiveConf {
	out := slices.Clone(x.conf)
	for _, name := range slices.Sorted(maps.Keys(x.snmp)) {
		if len(out) < slo.MaxObjectives && !x.configuredLocked(name) {
			out = append(out, x.snmp[name].conf)
		}
	}
	return out
}

// each calls f with every objective measured and its StorageType.
func (x *sloDefs) each(f func(c config.ObjectiveConf, storage int)) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for i, c := range x.allLocked() {
		storage := settable.ReadOnly
		if i >= len(x.conf) {
			storage = x.snmp[c.Name].storage
		}
		f(c, storage)
	}
}

// reconfigure takes the configuration's objectives and row limit.
func (x *sloDefs) reconfigure(c *config.Config, log interface{ Warn(string, ...any) }) {
	x.mu.Lock()
	x.conf = c.Objectives
	if x.apply != nil {
		x.apply(sloObjectives(x.allLocked()))
	}
	x.mu.Unlock()
	n := c.SLO.MaxSNMPObjectives
	x.maxRows.Store(int64(n))
	if x.table != nil {
		if held := x.table.SetMaxRows(n); held > n {
			log.Warn("fewer objectives allowed than were created: they are kept, and no new one is created until fewer remain",
				"table", x.table.Name, "max", n, "rows", held)
		}
	}
}

// putObjective adds, replaces (c) or removes (nil) an objective created
// over SNMP or the control socket (from), admitted by admitLocked under
// the lock of its insert; it is measured at once.
func (d *Daemon) putObjective(from, name string, c *created[config.ObjectiveConf]) error {
	x := d.slod
	rec := ""
	if c != nil {
		var err error
		if rec, err = record(&c.conf, c.storage); err != nil {
			return err
		}
	}
	x.mu.Lock()
	if c != nil {
		if err := x.admitLocked(from, name); err != nil {
			x.mu.Unlock()
			return err
		}
	}
	if c == nil {
		delete(x.snmp, name)
	} else {
		x.snmp[name] = *c
	}
	if x.apply != nil {
		x.apply(sloObjectives(x.allLocked()))
	}
	x.mu.Unlock()
	if d.num.SetRecord(SLORecords, name, rec) {
		if err := d.num.Save(); err != nil {
			return fmt.Errorf("%q: %w", name, err)
		}
	}
	return nil
}

// checkObjective checks an objective created over SNMP or the control
// socket (from) as the configuration file's are, with the record a
// nonVolatile one keeps and admitLocked as things stand (putObjective
// admits it again under the lock of its insert).
func (d *Daemon) checkObjective(from string, c config.ObjectiveConf, storage int) error {
	if err := config.CheckObjective(from, c); err != nil {
		return err
	}
	if _, err := record(&c, storage); err != nil {
		return err
	}
	d.slod.mu.Lock()
	defer d.slod.mu.Unlock()
	return d.slod.admitLocked(from, c.Name)
}

// admitLocked is the one admission of an objective created over SNMP or
// the control socket (from): its name against the configuration's, and
// for a new name room in what the state file holds (slo.MaxObjectives)
// and under slo.max_snmp_objectives, counted as sloDefTable counts its
// rows. An error wrapping settable.ErrFull says there is no room.
func (x *sloDefs) admitLocked(from, name string) error {
	if x.configuredLocked(name) {
		return spmierr.Errorf(spmierr.SiDuplicate, "%s %q: the configuration file has an objective of this name", from, name)
	}
	if _, has := x.snmp[name]; has {
		return nil // a replacement takes no new place
	}
	if len(x.allLocked()) >= slo.MaxObjectives {
		return fmt.Errorf("%w: %w", settable.ErrFull, spmierr.Errorf(spmierr.SiCallocFailed,
			"%s %q: %d objectives measured, the most the daemon keeps", from, name, slo.MaxObjectives))
	}
	held := 0
	for n := range x.snmp {
		held += b2i(!x.configuredLocked(n))
	}
	if limit := int(x.maxRows.Load()); held >= limit {
		return fmt.Errorf("%w: %w", settable.ErrFull, spmierr.Errorf(spmierr.SiCallocFailed,
			"%s %q: %d created already, the most slo.max_snmp_objectives (%d) allows", from, name, held, limit))
	}
	return nil
}

// sloRow is an objective as sloDefTable serves it: threshold in
// milliseconds (rounded up), target in parts per 100,000, window in
// seconds.
func sloRow(c config.ObjectiveConf, storage int) settable.Row {
	ms := int32((c.Threshold + time.Millisecond - 1) / time.Millisecond)
	return settable.Row{Name: c.Name, Status: settable.Active, Storage: storage, Vals: []asn1tree.Value{
		asn1tree.Str(c.Application), asn1tree.Str(c.Transaction), asn1tree.Int(ms),
		asn1tree.Int(int32(math.Round(c.Target * 1e5))), asn1tree.Int(int32(c.Window / time.Second))}}
}

func rowSLO(r *settable.Row) config.ObjectiveConf {
	return config.ObjectiveConf{Name: r.Name, Application: r.Vals[0].Str, Transaction: r.Vals[1].Str,
		Threshold: time.Duration(r.Vals[2].Signed()) * time.Millisecond, Target: float64(r.Vals[3].Signed()) / 1e5,
		Window: time.Duration(r.Vals[4].Signed()) * time.Second}
}

// sloRows is sloDefTable's Source.
type sloRows struct{ d *Daemon }

func (s sloRows) Rows() []settable.Row {
	var out []settable.Row
	s.d.slod.each(func(c config.ObjectiveConf, storage int) { out = append(out, sloRow(c, storage)) })
	return out
}

func (s sloRows) Check(_ *settable.Row, r *settable.Row) error {
	return s.d.checkObjective(schema.SLODefTable.Name, rowSLO(r), r.Storage)
}

func (s sloRows) Put(r *settable.Row) error {
	return s.d.putObjective(schema.SLODefTable.Name, r.Name, &created[config.ObjectiveConf]{conf: rowSLO(r), storage: r.Storage})
}

func (s sloRows) Remove(name string) error {
	return s.d.putObjective(schema.SLODefTable.Name, name, nil)
}

// sloTable restores the objectives created before and builds sloDefTable
// under base.
func (d *Daemon) sloTable(base asn1tree.OID) *settable.Table {
	x := &sloDefs{conf: d.cfg.Objectives}
	x.maxRows.Store(int64(d.cfg.SLO.MaxSNMPObjectives))
	x.snmp = loadCreated(d.num, SLORecords, d.log, func(name string, c *config.ObjectiveConf) error {
		c.Name = name
		return config.CheckObjective(SLORecords, *c)
	})
	t := schema.SLODefTable
	x.table = &settable.Table{Name: t.Name, Entry: append(base.Clone(), t.Arc, 1), Cols: tableCols(t.Columns), Added: tableCols(t.Added),
		MaxKey: t.IndexMax, CheckKey: func(name string) error {
			return config.CheckObjective("name", config.ObjectiveConf{Name: name, Application: "x", Transaction: "x", Target: 0.9, Window: time.Hour})
		},
		Src: sloRows{d}, MaxRows: d.cfg.SLO.MaxSNMPObjectives, MaxRowsSetting: "slo.max_snmp_objectives", MaxWaiting: d.cfg.SNMPSet.MaxWaitingRows, PendingTTL: d.cfg.SNMPSet.WaitingLifetime}
	d.slod = x
	// Here, not with the measuring: the rows and their limit exist whether
	// ARM is served or not.
	d.addReloader(Reloader{Name: "objectives", Apply: func(c *config.Config) error { x.reconfigure(c, d.log); return nil }})
	return x.table
}
