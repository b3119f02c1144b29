package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfagent/subagent/agentx"
	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/hotset"
	"github.com/perfagent/subagent/internal/foldlog"
	"github.com/perfagent/subagent/mib/schema"
	"github.com/perfagent/subagent/notiflog"
	"github.com/perfagent/subagent/settable"
	"github.com/perfagent/subagent/spmi"
	"github.com/perfagent/subagent/traps"
	"github.com/perfagent/subagent/usm"
)

// MasterNotify sends a notification through the AgentX master
// (agentx.Subagent.Notify).
type MasterNotify func(ctx context.Context, vbs []agentx.VarBind) error

// hotsets evaluates the configured hotsets at their interval and raises
// their exceptions and notifications.
type hotsets struct {
	eng       *hotset.Engine
	engine    *engineState  // the agent's SNMPv3 engine, v3 traps' sender
	notes     *notiflog.Log // every notification sent, on every path
	tree      *treeNotes    // the directory's tree changed notifications
	log       *slog.Logger
	num       *spmi.Numbering // numbers the hotsets (numberHotsets)
	base      asn1tree.OID
	start     time.Time
	interval  atomic.Int64 // time.Duration
	wake      chan struct{}
	ready     chan struct{} // closed once run has made the sender
	readyOnce sync.Once

	mu      sync.Mutex
	dests   []traps.Dest
	sender  *traps.Sender // nil until Run
	master  MasterNotify
	masterQ chan masterNote

	// defs serialises the hotset definitions: a reload, an AgentX Set
	// and the engine's Replace happen one at a time, in order (define).
	defs  sync.Mutex
	conf  []hotset.Def       // from the configuration file; under defs
	snmp  map[string]snmpHot // created over SNMP (snmpwrite.go); under defs
	table *settable.Table    // hotsetDefTable, for max_snmp_rows; set by initWritable

	errs map[string]string // last error logged by hotset name; only run's goroutine uses it
	// refused logs the rows refused over SNMP, folded: a manager's flood
	// of SETs logs a line a minute.
	refused *foldlog.Log

	masterSent, masterFailed atomic.Uint64
	suppressed               atomic.Uint64 // notifications the hotsets' rate limits held back
	evalLast, evalMax        atomic.Int64  // an evaluation's duration (time.Duration), to its events handed on
	delay                    delayHist     // from when an evaluation was due to its events handed on
	masterDown               atomic.Bool
	closed                   traps.Counts   // of senders replaced by a reload
	closing                  sync.WaitGroup // senders replaced, closing (apply); run waits for them
}

// initHotsets adds the Hotset context (empty without hotsets, so that a
// reload can add some), its Agent statistics and its reloader.
func (d *Daemon) initHotsets() error {
	defs, err := hotsetDefs(d.cfg)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	if err := numberHotsets(d.num, defs, true); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	hs := &hotsets{conf: defs, snmp: loadSNMPHotsets(d.num, d.log), num: d.num}
	eng, err := hotset.New(hs.allLocked(), d.cfg.Hotset.Exceptions, nil)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	eng.SetLimit(hotsetLimit(d.cfg))
	log := d.log.With("part", "hotsets")
	// Read only: Run starts its writer once the start cannot be refused.
	notes, err := notiflog.Load(filepath.Join(d.cfg.StateDir, notiflog.File), d.cfg.Hotset.LogEntries, d.cfg.Hotset.LogMaxAge, nil, log)
	if err != nil {
		return err
	}
	hs.eng, hs.notes, hs.log, hs.engine = eng, notes, log, d.engine
	hs.refused = foldlog.New(log, slog.LevelWarn)
	hs.base, hs.start = d.cfg.Base, time.Now()
	hs.wake, hs.dests, hs.masterQ = make(chan struct{}, 1), trapDests(d.cfg), make(chan masterNote, 64)
	hs.ready = make(chan struct{})
	hs.interval.Store(int64(d.cfg.Hotset.Interval))
	d.hot = hs
	d.h.Add(hotset.Provider{E: eng})
	d.h.Add(notiflog.Provider{L: notes})
	if err := d.initDirectory(hs); err != nil {
		return err
	}
	d.addAgentStats(hs.agentStats)
	d.addReloader(Reloader{Name: "hotsets", Check: hs.check, Apply: hs.apply})
	return nil
}

// numberHotsets gives every configured hotset its number (assign), or
// only checks that each has or may get one: a hotset the numbering cannot
// take is a start or reload error naming it, never a hotset left out of
// the tree.
func numberHotsets(num *spmi.Numbering, defs []hotset.Def, assign bool) error {
	names := make([]string, len(defs))
	for i, d := range defs {
		names[i] = d.Name
	}
	if err := num.RoomFor(hotset.Parent, names...); err != nil {
		return fmt.Errorf("configured hotsets: %w", err)
	}
	for _, name := range names {
		if !assign {
			break
		}
		if _, err := num.Assign(hotset.Parent, name, nil); err != nil {
			return fmt.Errorf("hotset %q: %w", name, err)
		}
	}
	return nil
}

// setMasterNotify makes the hotsets' notifications go through the AgentX
// master as well (which delivers them to its own trap sinks).
func (d *Daemon) setMasterNotify(f MasterNotify) {
	d.hot.mu.Lock()
	defer d.hot.mu.Unlock()
	d.hot.master = f
}

func (hs *hotsets) check(c *config.Config) error {
	defs, err := hotsetDefs(c)
	if err != nil {
		return err
	}
	if _, err := hotset.New(defs, c.Hotset.Exceptions, nil); err != nil {
		return err
	}
	if err := numberHotsets(hs.num, defs, false); err != nil {
		return err
	}
	ds := trapDests(c)
	for i, d := range ds {
		if err := d.Check(); err != nil {
			return fmt.Errorf("traps[%d].%w", i, err)
		}
	}
	if i := hasV3(ds); i >= 0 {
		if _, err := hs.engine.get(); err != nil { // started now if the first v3 destination is new
			return fmt.Errorf("traps[%d]: SNMPv3 is sent from the agent's engine, which is off until a restart: %w", i, err)
		}
	}
	return nil
}

// newSender makes the sender of dests, v3 ones from the agent's engine.
func (hs *hotsets) newSender(dests []traps.Dest) (*traps.Sender, error) {
	var eng usm.Engine
	if hasV3(dests) >= 0 {
		var err error
		if eng, err = hs.engine.get(); err != nil {
			return nil, err
		}
	}
	return traps.NewReporting(dests, eng, hs.log, hs.report)
}

// apply takes a reload's hotset settings. Its error says what was not
// applied and what runs instead; everything else is applied.
func (hs *hotsets) apply(c *config.Config) error {
	var errs []error
	defs, _ := hotsetDefs(c) // checked
	kept := 0
	err := numberHotsets(hs.num, defs, true) // room checked: a SET may have taken it since
	if err == nil {
		err = hs.define(func() func() {
			old := hs.conf
			hs.conf = defs // a configured name hides a row created over SNMP
			return func() { hs.conf, kept = old, len(old) }
		})
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("hotsets not reloaded, the %d configured before stay: %w", kept, err))
	}
	hs.applyMaxRows(c.Hotset.MaxSNMPRows)
	hs.eng.SetKeep(c.Hotset.Exceptions)
	hs.eng.SetLimit(hotsetLimit(c))
	_ = hs.notes.SetLimits(c.Hotset.LogEntries, c.Hotset.LogMaxAge) // checked
	hs.interval.Store(int64(c.Hotset.Interval))
	hs.tree.interval.Store(int64(c.Hotset.TreeChangedInterval))
	hs.mu.Lock()
	old := hs.sender
	dests := trapDests(c)
	if old != nil {
		s, err := hs.newSender(dests)
		if err != nil {
			errs = append(errs, fmt.Errorf("traps not reloaded, the %d destinations before stay: %w", len(hs.dests), err))
			old = nil // still in use
		} else {
			hs.sender, hs.dests = s, dests
		}
	} else {
		hs.dests = dests
	}
	ndests := len(hs.dests)
	hs.mu.Unlock()
	if old != nil {
		hs.mu.Lock()
		hs.closed = add(hs.closed, old.Counts())
		hs.mu.Unlock()
		hs.closing.Go(old.Close) // an inform in flight may take its timeout; run waits

	}
	select {
	case hs.wake <- struct{}{}:
	default:
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	hs.log.Info("hotsets reloaded", "hotsets", len(defs), "trap_destinations", ndests)
	return nil
}

// run evaluates at once (which primes the counters' rates) and then at
// every interval until ctx is done.
func (hs *hotsets) run(ctx context.Context, h *spmi.Hierarchy) error {
	hs.notes.Start()       // Run started it already, when the start was counted
	defer hs.notes.Close() // last, after the sender's outcomes: writes what is pending
	hs.mu.Lock()
	s, err := hs.newSender(hs.dests)
	if err != nil {
		hs.mu.Unlock()
		return err
	}
	hs.sender = s
	hs.mu.Unlock()
	hs.readyOnce.Do(func() { close(hs.ready) })
	defer func() {
		hs.mu.Lock()
		s := hs.sender
		hs.mu.Unlock()
		s.Close()
		hs.closing.Wait()
	}()
	// Waited for before the sender and the log close (deferred earlier):
	// both send notifications, and the directory's writes its file.
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { hs.masterLoop(ctx) })
	wg.Go(func() { hs.tree.run(ctx, hs) })
	t := time.NewTimer(0)
	defer t.Stop()
	due := time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-hs.wake:
			iv := time.Duration(hs.interval.Load())
			t.Reset(iv)
			due = time.Now().Add(iv)
			continue
		case <-t.C:
		}
		hs.evaluate(h, due)
		hs.logErrors()
		hs.notes.Expire()
		iv := time.Duration(hs.interval.Load())
		t.Reset(iv)
		due = time.Now().Add(iv)
	}
}

// evaluate evaluates the hotsets once and hands their events on,
// measuring how long that takes and how late after due it ended
// (Agent/hotsets).
func (hs *hotsets) evaluate(h *spmi.Hierarchy, due time.Time) {
	start := time.Now()
	for _, ev := range hs.eng.Tick(h) {
		hs.raise(ev)
	}
	end := time.Now()
	if start.Before(due) { // woken early: counted from its start
		due = start
	}
	hs.delay.add(end.Sub(due))
	d := end.Sub(start)
	hs.evalLast.Store(int64(d))
	if d > time.Duration(hs.evalMax.Load()) { // only run's goroutine stores
		hs.evalMax.Store(int64(d))
	}
}

// logErrors logs a hotset's evaluation error once when it appears or
// changes (a statistic that matches nothing, with the nearest name that
// does), and once when it clears (DDS statistics that appeared later).
func (hs *hotsets) logErrors() {
	if hs.errs == nil {
		hs.errs = map[string]string{}
	}
	seen := map[string]bool{}
	for _, v := range hs.eng.Views() {
		name := v.Def.Name
		seen[name] = true
		msg := ""
		if v.Result.Err != nil {
			msg = v.Result.Err.Error()
		}
		switch last := hs.errs[name]; {
		case msg == last:
		case msg == "":
			hs.log.Info("hotset matches its statistic again", "hotset", name, "stat", v.Def.Path())
		default:
			hs.log.Warn("hotset error", "hotset", name, "stat", v.Def.Path(), "err", msg)
		}
		hs.errs[name] = msg
	}
	for name := range hs.errs {
		if !seen[name] {
			delete(hs.errs, name) // removed by a reload
		}
	}
}

// raise logs an exception and sends a notification, as the hotset asks,
// unless the hotset's rate limit held the event back: then its first
// held event logs one line for the episode, and the next one sent
// carries the count (hotsetSuppressed). A held event costs a counter; a
// sent one waits for no destination (the sender and the master take
// from queues), and the notification log's Add is the log's to keep off
// the disk.
func (hs *hotsets) raise(ev hotset.Event) {
	d := ev.Def
	if ev.Held {
		if d.Excp.Traps() {
			hs.suppressed.Add(1)
		}
		if ev.Suppressed == 1 {
			hs.log.Warn("hotset reports suppressed by its rate limit: counted until the next one is sent", "hotset", d.Name,
				"stat", d.Path(), "peer_set", ev.Parent, "notify_burst", d.Limit.Burst, "notify_interval", d.Limit.Every)
		}
		return
	}
	switch {
	case ev.Cleared:
		hs.log.Info("hotset cleared", "hotset", d.Name, "stat", d.Path(), "peer_set", ev.Parent,
			"rearm", d.Rearm, "peer", hotset.Peers(ev.Items), "suppressed", ev.Suppressed)
	case d.Excp.Exceptions():
		hs.log.Warn("hotset exception", "hotset", d.Name, "severity", d.Severity, "stat", d.Path(),
			"peer_set", ev.Parent, "threshold", d.Threshold, "peers", hotset.Peers(ev.Items), "suppressed", ev.Suppressed)
	}
	if !d.Excp.Traps() {
		return
	}
	n, err := Notification(hs.base, ev, time.Since(hs.start))
	if err != nil {
		hs.log.Error("hotset notification not built", "hotset", d.Name, "err", err)
		return
	}
	hs.send(n)
}

// send logs n in the notification log and sends it on every path: the
// trap destinations and the AgentX master. Each path's outcome is
// recorded in n's log entry.
func (hs *hotsets) send(n traps.Notification) {
	vals, oids := make([]asn1tree.Value, len(n.Vars)), make([]asn1tree.OID, len(n.Vars))
	for i, v := range n.Vars {
		vals[i], oids[i] = v.Value, v.OID
	}
	n.LogIndex = hs.notes.Add(n.Uptime, n.TrapOID(), vals, oids)
	hs.mu.Lock()
	s, master := hs.sender, hs.master
	hs.mu.Unlock()
	if s != nil { // nil before run (the expressions wait for it: ready)
		s.Send(n)
	}
	if master != nil {
		vbs := []agentx.VarBind{{OID: agentx.SnmpTrapOID0, Value: asn1tree.Value{Kind: asn1tree.ObjectIdentifier, OID: n.TrapOID()}}}
		for _, v := range n.Vars {
			vbs = append(vbs, agentx.VarBind{OID: v.OID, Value: v.Value})
		}
		select {
		case hs.masterQ <- masterNote{vbs, n.LogIndex}:
		default:
			hs.masterFailed.Add(1)
			hs.notes.Outcome(n.LogIndex, "master", false, "dropped: the queue to the master is full")
		}
	}
}

// masterNote is a notification for the master with its log index.
type masterNote struct {
	vbs []agentx.VarBind
	idx uint32
}

// report records what a trap destination made of a notification: a trap
// handed to the kernel is "sent (unconfirmed)" until an ICMP error, if
// any, replaces it with "failed: ..." (traps.Report).
func (hs *hotsets) report(n *traps.Notification, d traps.Dest, err error) {
	switch {
	case errors.Is(err, traps.ErrDropped):
		hs.notes.Outcome(n.LogIndex, d.String(), false, err.Error())
	case err != nil:
		hs.notes.Outcome(n.LogIndex, d.String(), false, "failed: "+err.Error())
	case d.Inform:
		hs.notes.Outcome(n.LogIndex, d.String(), true, "acknowledged")
	default:
		hs.notes.Outcome(n.LogIndex, d.String(), true, "sent (unconfirmed)")
	}
}

// Notification is the notification of a hotset event: snmpTrapOID.0 is
// base.0.<trap_no>; the VarBinds are the objects of the NOTIFICATION-TYPE
// in the order of its OBJECTS clause (schema.HotsetTrap: name, peer context,
// threshold, severity, hottest peer, its compared value, their units, the
// list of hot peers, the notifications held back since the previous one),
// then each hot item with its served value, hottest
// first, under the OID the configured views serve it (hotset.ServedOID:
// its table cell, which the module names, unless only scalars are
// served). Items served as Counter64 are left out:
// RFC 3584 3.2 makes a notification holding one untranslatable to SNMPv1,
// and a master drops it for its v1 sinks; their values are in the list.
func Notification(base asn1tree.OID, ev hotset.Event, uptime time.Duration) (traps.Notification, error) {
	d := ev.Def
	n := traps.Notification{Enterprise: base, Specific: d.TrapNo, Uptime: uptime}
	var top hotset.Item
	if len(ev.Items) > 0 {
		top = ev.Items[0]
	}
	var bs []schema.Binding
	var err error
	suppressed := asn1tree.Gauge(uint32(min(ev.Suppressed, math.MaxUint32)))
	if ev.Cleared {
		// schema.HotsetCleared: the peer and the value it fell to, then the
		// notifications held back.
		n.Specific = int(schema.HotsetClearedNo)
		bs, err = schema.HotsetCleared.Bind(base, asn1tree.Str(d.Name), asn1tree.Str(ev.Parent),
			asn1tree.Int(int32(d.Threshold)), asn1tree.Int(int32(d.Rearm)), asn1tree.Int(int32(d.Severity)),
			asn1tree.Str(top.Name), asn1tree.Str(hotset.FormatValue(top.Value)), asn1tree.Str(top.Units), suppressed)
	} else {
		bs, err = schema.HotsetTrap(uint32(d.TrapNo)).Bind(base, asn1tree.Str(d.Name), asn1tree.Str(ev.Parent),
			asn1tree.Int(int32(d.Threshold)), asn1tree.Int(int32(d.Severity)),
			asn1tree.Str(top.Name), asn1tree.Str(hotset.FormatValue(top.Value)), asn1tree.Str(top.Units),
			asn1tree.Str(hotset.Peers(ev.Items)), suppressed)
	}
	if err != nil {
		return n, err
	}
	for _, b := range bs {
		n.Vars = append(n.Vars, traps.VarBind{OID: b.OID, Value: b.Value})
	}
	for _, it := range ev.Items {
		if k := it.Served.Kind; k != asn1tree.NoValue && k != asn1tree.Counter64 {
			n.Vars = append(n.Vars, traps.VarBind{OID: it.OID, Value: it.Served})
		}
	}
	return n, nil
}

// masterLoop hands notifications to the master one at a time, each with
// a time limit, so that a master that is away never blocks evaluation.
func (hs *hotsets) masterLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case mn := <-hs.masterQ:
			hs.mu.Lock()
			f := hs.master
			hs.mu.Unlock()
			c, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := f(c, mn.vbs)
			cancel()
			if err != nil {
				hs.notes.Outcome(mn.idx, "master", false, "failed: "+err.Error())
			} else {
				hs.notes.Outcome(mn.idx, "master", true, "taken by the master")
			}
			if err != nil {
				hs.masterFailed.Add(1)
				if !hs.masterDown.Swap(true) {
					hs.log.Warn("notifications through the AgentX master failing", "err", err)
				}
				continue
			}
			hs.masterSent.Add(1)
			if hs.masterDown.Swap(false) {
				hs.log.Info("notifications through the AgentX master delivered again")
			}
		}
	}
}

func add(a, b traps.Counts) traps.Counts {
	return traps.Counts{Sent: a.Sent + b.Sent, Failed: a.Failed + b.Failed, Dropped: a.Dropped + b.Dropped}
}

// TrapsCx (Agent/traps, 32) counts the notifications sent: the hotsets' and the tree changed ones.
var (
	TrapsCx    = spmi.CxDesc{Name: "traps", Descr: "Notifications sent: the hotsets' and treeChanged", ASN: spmi.ASNAgentTraps}
	TrapsStats = []spmiwire.StatDesc{
		{Name: "sent", Descr: "Traps handed to the kernel, informs acknowledged", ASN: 1, Max: 10, Val: ddswire.SiCounter},
		{Name: "failed", Descr: "Sends that failed, traps found lost by an ICMP error included", ASN: 2, Max: 10, Val: ddswire.SiCounter},
		{Name: "dropped", Descr: "Dropped for a full destination queue", ASN: 3, Max: 10, Val: ddswire.SiCounter},
		{Name: "down", Descr: "Trap destinations whose last send failed", ASN: 4, Max: 10, Val: ddswire.SiQuantity, Units: "destinations"},
		{Name: "mastersent", Descr: "Taken by the AgentX master", ASN: 5, Max: 10, Val: ddswire.SiCounter},
		{Name: "masterfailed", Descr: "Not taken by the AgentX master (failed or dropped)", ASN: 6, Max: 10, Val: ddswire.SiCounter},
		{Name: "suppressed", Descr: "Hotset notifications held back by their hotset's rate limit", ASN: 7, Max: 10, Val: ddswire.SiCounter},
	}
	// HotsetsCx (Agent/hotsets, 37): the hotsets' evaluation, which no
	// destination or disk may slow down.
	HotsetsCx    = spmi.CxDesc{Name: "hotsets", Descr: "The hotsets' evaluation", ASN: spmi.ASNAgentHotsets}
	HotsetsStats = append([]spmiwire.StatDesc{
		{Name: "evalms", Descr: "Last evaluation's duration, its events handed on", ASN: 1, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3, Units: "milliseconds"},
		{Name: "evalmaxms", Descr: "Longest evaluation since the daemon started", ASN: 2, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3, Units: "milliseconds"},
	}, delayStats()...)
)

func (hs *hotsets) agentStats(b *spmi.Builder, agent *spmi.Node) error {
	cx, err := b.Context(agent, &TrapsCx)
	if err != nil {
		return err
	}
	hs.mu.Lock()
	c := hs.closed
	if hs.sender != nil {
		cur := hs.sender.Counts()
		c, c.Down = add(c, cur), cur.Down
	}
	hs.mu.Unlock()
	if err := b.Stats(cx, TrapsStats, []spmiwire.Value{
		spmiwire.Uint(c.Sent), spmiwire.Uint(c.Failed), spmiwire.Uint(c.Dropped), spmiwire.Uint(uint64(c.Down)),
		spmiwire.Uint(hs.masterSent.Load()), spmiwire.Uint(hs.masterFailed.Load()), spmiwire.Uint(hs.suppressed.Load()),
	}); err != nil {
		return err
	}
	if cx, err = b.Context(agent, &HotsetsCx); err != nil {
		return err
	}
	ms := func(d int64) spmiwire.Value { return spmiwire.Float(float64(d) / float64(time.Millisecond)) }
	return b.Stats(cx, HotsetsStats, append([]spmiwire.Value{ms(hs.evalLast.Load()), ms(hs.evalMax.Load())}, hs.delay.values()...))
}
