package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/hotset"
	"github.com/perfagent/subagent/internal/foldlog"
	"github.com/perfagent/subagent/mib/schema"
	"github.com/perfagent/subagent/rtimelan"
	"github.com/perfagent/subagent/settable"
	"github.com/perfagent/subagent/spmi"
)

// The tables managers write over SNMP (settable): hotsetDefTable at
// base.ASNWritable.1, rTimeLANHostTable at base.ASNWritable.2. The
// standalone responder never offers them for writing.

// HotsetRecords is where the numbering keeps the nonVolatile hotset rows.
const HotsetRecords = "SNMP/hotsetDefTable"

// hotRec is a hotset row as the numbering keeps it.
type hotRec struct {
	Stat      string `json:"stat"`
	MaxResp   int    `json:"maxresp"`
	Threshold int    `json:"threshold"`
	Frequency int    `json:"frequency"` // seconds
	Feed      int    `json:"feed"`      // hotset.Feed
	Excp      int    `json:"excp"`      // hotset.Excp
	Severity  int    `json:"severity"`
	TrapNo    int    `json:"trap_no"`
	Rearm     int    `json:"rearm,omitempty"`
	Cleared   bool   `json:"cleared,omitempty"`
}

func recDef(name string, r hotRec) (hotset.Def, error) {
	d := hotset.Def{Name: name, MaxResp: r.MaxResp, Threshold: r.Threshold, Frequency: time.Duration(r.Frequency) * time.Second,
		Feed: hotset.Feed(r.Feed), Excp: hotset.Excp(r.Excp), Severity: r.Severity, TrapNo: r.TrapNo,
		Rearm: r.Rearm, Cleared: r.Cleared}
	var err error
	if d.GrandParent, d.Stat, err = hotset.ParsePath(r.Stat); err != nil {
		return d, err
	}
	return d, d.Validate()
}

func defRec(d hotset.Def) hotRec {
	return hotRec{Stat: d.Path(), MaxResp: d.MaxResp, Threshold: d.Threshold, Frequency: int(d.Frequency / time.Second),
		Feed: int(d.Feed), Excp: int(d.Excp), Severity: d.Severity, TrapNo: d.TrapNo, Rearm: d.Rearm, Cleared: d.Cleared}
}

// tableCols are a writable table's columns as the module declares them
// (mib/schema/writable.go), which owns their ranges and defaults: its Columns,
// then those Added after RowStatus. rowDef and defRow read
// hotsetDefTable's in the order of both (AllColumns).
func tableCols(cols []schema.WritableColumn) []settable.Col {
	out := make([]settable.Col, len(cols))
	for i, c := range cols {
		out[i] = settable.Col{Name: c.Name, Kind: c.Kind, Min: c.Min, Max: c.Max, ReadOnly: c.ReadOnly}
		if c.Default != nil {
			out[i].Default = ptr(asn1tree.Int(int32(*c.Default)))
		}
		if c.DefaultText != nil {
			out[i].Default = ptr(asn1tree.Str(*c.DefaultText))
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func rowDef(r *settable.Row) (hotset.Def, error) {
	i := func(k int) int { return int(r.Vals[k].Signed()) }
	return recDef(r.Name, hotRec{Stat: r.Vals[0].Str, MaxResp: i(1), Threshold: i(2), Frequency: i(3),
		Feed: i(4) - 1, Excp: i(5) - 1, Severity: i(6), TrapNo: i(7), Rearm: i(8), Cleared: i(9) == truthTrue})
}

func defRow(d hotset.Def, storage int) settable.Row {
	return settable.Row{Name: d.Name, Status: settable.Active, Storage: storage, Vals: []asn1tree.Value{
		asn1tree.Str(d.Path()), asn1tree.Int(int32(d.MaxResp)), asn1tree.Int(int32(d.Threshold)),
		asn1tree.Int(int32(d.Frequency / time.Second)), asn1tree.Int(int32(d.Feed) + 1), asn1tree.Int(int32(d.Excp) + 1),
		asn1tree.Int(int32(d.Severity)), asn1tree.Int(int32(d.TrapNo)), asn1tree.Int(int32(d.Rearm)), truthValue(d.Cleared)}}
}

// TruthValue (SNMPv2-TC): true(1), false(2).
const truthTrue = 1

func truthValue(b bool) asn1tree.Value {
	if b {
		return asn1tree.Int(truthTrue)
	}
	return asn1tree.Int(2)
}

// snmpHot is a hotset created over SNMP.
type snmpHot struct {
	def     hotset.Def
	storage int
}

// loadSNMPHotsets reads the nonVolatile rows kept in the numbering; a
// damaged one is logged and left out.
func loadSNMPHotsets(num *spmi.Numbering, log *slog.Logger) map[string]snmpHot {
	out := map[string]snmpHot{}
	names, recs := num.Records(HotsetRecords)
	for _, name := range names {
		var r hotRec
		err := json.Unmarshal([]byte(recs[name]), &r)
		var d hotset.Def
		if err == nil {
			d, err = recDef(name, r)
		}
		if err != nil {
			log.Error("hotset created over SNMP not restored", "hotset", name, "file", num.File(), "err", err)
			continue
		}
		out[name] = snmpHot{def: d, storage: settable.NonVolatile}
	}
	return out
}

// hotsetRows is hotsetDefTable's Source: the configured hotsets (readOnly)
// and those created over SNMP, evaluated by the one engine.
type hotsetRows struct {
	d *Daemon
}

func (s hotsetRows) Rows() []settable.Row {
	hs := s.d.hot
	hs.defs.Lock()
	defer hs.defs.Unlock()
	var out []settable.Row
	taken := map[string]bool{}
	for _, d := range hs.conf {
		out = append(out, defRow(d, settable.ReadOnly))
		taken[d.Name] = true
	}
	for _, h := range hs.snmp {
		if !taken[h.def.Name] { // hidden by the configured hotset, as in allLocked
			out = append(out, defRow(h.def, h.storage))
		}
	}
	return out
}

func (s hotsetRows) Check(_ *settable.Row, r *settable.Row) error {
	d, err := rowDef(r)
	if err != nil {
		return err
	}
	// A hotset without a number would be left out of the tree.
	if err := s.d.num.Room(hotset.Parent, d.Name); err != nil {
		return fmt.Errorf("%w: %w", settable.ErrFull, err)
	}
	if err := s.d.checkHotsetTrap(d.Name, &snmpHot{def: d, storage: r.Storage}); err != nil {
		return fmt.Errorf("hotsetDefTrapNo: %w", err)
	}
	snap := s.d.h.Current() // never waits: the master allows a second
	if snap == nil {
		return nil
	}
	if _, err := hotset.Probe(d, snap); err != nil {
		s.d.hot.refused.Note(foldlog.Source{}, "hotset row refused: its statistic matches nothing", "no such statistic",
			"hotset", foldlog.Text(d.Name), "stat", foldlog.Text(d.Path()), "err", foldlog.Text(err.Error()))
		return err
	}
	return nil
}

func (s hotsetRows) Put(r *settable.Row) error {
	d, err := rowDef(r)
	if err != nil {
		return err
	}
	h := &snmpHot{def: d, storage: r.Storage}
	s.d.traps.Lock() // checked again: an alarm may have taken the number since Check
	defer s.d.traps.Unlock()
	if err := s.d.checkHotsetTrap(d.Name, h); err != nil {
		return fmt.Errorf("hotsetDefTrapNo: %w", err)
	}
	// Numbered now (Check found room): the row is served once active.
	if _, err := s.d.num.Assign(hotset.Parent, d.Name, nil); err != nil {
		return err
	}
	return s.d.hot.putSNMP(d.Name, h, s.d.num)
}

func (s hotsetRows) Remove(name string) error { return s.d.hot.putSNMP(name, nil, s.d.num) }

// putSNMP adds, replaces (h) or removes (nil) a hotset created over SNMP,
// in the engine and in the numbering's records. An error leaves both as
// they were: the Set fails (commitFailed) and is undone.
func (hs *hotsets) putSNMP(name string, h *snmpHot, num *spmi.Numbering) error {
	var old snmpHot
	var had bool
	err := hs.define(func() func() {
		old, had = hs.snmp[name]
		if h == nil {
			delete(hs.snmp, name)
		} else {
			hs.snmp[name] = *h
		}
		return func() {
			if had {
				hs.snmp[name] = old
			} else {
				delete(hs.snmp, name)
			}
		}
	})
	if err != nil {
		return fmt.Errorf("hotset %q: %w", name, err)
	}
	rec := ""
	if h != nil && h.storage == settable.NonVolatile {
		b, _ := json.Marshal(defRec(h.def))
		rec = string(b)
	}
	if num.SetRecord(HotsetRecords, name, rec) {
		if err := num.Save(); err != nil {
			return fmt.Errorf("hotset %q: %w", name, err)
		}
	}
	select {
	case hs.wake <- struct{}{}:
	default:
	}
	return nil
}

// define is the one way the hotset definitions change: change edits conf
// or snmp and returns how to put them back; the engine gets every
// definition before the lock is released, so a reload and a Set never
// install an older list over a newer one. An error from the engine
// undoes the change and is returned.
func (hs *hotsets) define(change func() (undo func())) error {
	hs.defs.Lock()
	defer hs.defs.Unlock()
	undo := change()
	if err := hs.eng.Replace(hs.allLocked()); err != nil {
		undo()
		return err
	}
	return nil
}

// applyMaxRows applies hotset.max_snmp_rows to hotsetDefTable: rows
// beyond a lowered limit are kept, and none is created until fewer.
func (hs *hotsets) applyMaxRows(n int) {
	if hs.table == nil {
		return
	}
	if held := hs.table.SetMaxRows(n); held > n {
		hs.log.Warn("hotset.max_snmp_rows is below the rows created over SNMP: they are kept, and no new row is created until fewer remain",
			"max_snmp_rows", n, "rows", held)
	}
}

// allLocked is what the engine evaluates: the configured hotsets, then
// those created over SNMP whose names the configuration does not use.
// The caller holds defs.
func (hs *hotsets) allLocked() []hotset.Def {
	out := append([]hotset.Def(nil), hs.conf...)
	taken := map[string]bool{}
	for _, d := range hs.conf {
		taken[d.Name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(hs.snmp)) {
		if !taken[name] {
			out = append(out, hs.snmp[name].def)
		}
	}
	return out
}

// hostRows is rTimeLANHostTable's Source: the hosts RTime/LAN measures,
// the configured ones readOnly; `subagent create` and SNMP see the same.
type hostRows struct{ r *rtimeLAN }

func (s hostRows) monitor() *rtimelan.Monitor {
	if s.r == nil {
		return nil
	}
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	return s.r.m
}

func (s hostRows) Rows() []settable.Row {
	m := s.monitor()
	if m == nil {
		return nil
	}
	var out []settable.Row
	for _, e := range m.Entries() {
		st := settable.Volatile
		switch {
		case e.Configured:
			st = settable.ReadOnly
		case e.Kept:
			st = settable.NonVolatile
		}
		out = append(out, settable.Row{Name: e.Name, Vals: []asn1tree.Value{asn1tree.Gauge(e.ASN)}, Status: settable.Active, Storage: st})
	}
	return out
}

func (s hostRows) Check(old *settable.Row, r *settable.Row) error {
	m := s.monitor()
	if m == nil {
		return errors.New("RTime/LAN is off on this host")
	}
	if old != nil {
		return nil // a host row has nothing else to change
	}
	err := m.CanCreate(r.Name)
	if errors.Is(err, rtimelan.ErrTooManyHosts) {
		return fmt.Errorf("%w: %w", settable.ErrFull, err)
	}
	return err
}

func (s hostRows) Put(r *settable.Row) error {
	m := s.monitor()
	if m == nil {
		return errors.New("RTime/LAN is off on this host")
	}
	var err error
	if r.Storage == settable.NonVolatile {
		_, err = m.Create(r.Name)
	} else {
		_, err = m.CreateVolatile(r.Name)
	}
	return err
}

func (s hostRows) Remove(name string) error {
	m := s.monitor()
	if m == nil {
		return errors.New("RTime/LAN is off on this host")
	}
	return m.Remove(name)
}

// WritableTables are the tables managers write through the AgentX master
// (nil before New). Their OIDs are under base.spmi.ASNWritable.
func (d *Daemon) WritableTables() *settable.Writer { return d.writer }

// initWritable builds the writable tables once hotsets, expressions and
// RTime/LAN are set.
func (d *Daemon) initWritable() {
	base := append(d.cfg.Base.Clone(), spmi.ASNWritable)
	ht, lt := schema.HotsetDefTable, schema.RTimeLANHostTable
	hot := &settable.Table{Name: ht.Name, Entry: append(base.Clone(), ht.Arc, 1), Cols: tableCols(ht.Columns), Added: tableCols(ht.Added), MaxKey: ht.IndexMax,
		CheckKey: func(name string) error {
			return (&hotset.Def{Name: name, GrandParent: "x", Stat: "x", Feed: hotset.FeedAlways}).Validate()
		},
		Src: hotsetRows{d}, MaxRows: d.cfg.Hotset.MaxSNMPRows, MaxRowsSetting: "hotset.max_snmp_rows", MaxWaiting: d.cfg.SNMPSet.MaxWaitingRows, PendingTTL: d.cfg.SNMPSet.WaitingLifetime}
	d.hot.table = hot
	hosts := &settable.Table{Name: lt.Name, Entry: append(base.Clone(), lt.Arc, 1), MaxKey: lt.IndexMax, Cols: tableCols(lt.Columns), Added: tableCols(lt.Added),
		CheckKey: checkHostIndex, Src: hostRows{d.rtl}, MaxRows: 1 << 30, // rtime_lan.max_hosts bounds them
		MaxWaiting: d.cfg.SNMPSet.MaxWaitingRows, PendingTTL: d.cfg.SNMPSet.WaitingLifetime}
	d.writer = settable.NewWriter(d.log.With("part", "snmpset"), append(append([]*settable.Table{hot, hosts}, d.exprTables(base)...), d.sloTable(base))...)
}

// checkHostIndex takes a host written as rTimeLANHostTable names it: the
// monitor canonicalizes a host, so "[::1]" would create or name row "::1".
func checkHostIndex(name string) error {
	if err := rtimelan.CheckHost(name); err != nil {
		return err
	}
	if c := rtimelan.CanonicalHost(name); c != name {
		return fmt.Errorf("write the host as %q", c)
	}
	return nil
}
