package daemon

import (
	"context"
	"fmt"
	"log/slog"
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
	"github.com/perfagent/subagent/mib"
	"github.com/perfagent/subagent/notiflog"
	"github.com/perfagent/subagent/spmi"
	"github.com/perfagent/subagent/traps"
)

// MasterNotify sends a notification through the AgentX master
// (agentx.Subagent.Notify).
type MasterNotify func(ctx context.Context, vbs []agentx.VarBind) error

// hotsets evaluates the configured hotsets at their interval and raises
// their exceptions and notifications.
type hotsets struct {
	eng      *hotset.Engine
	notes    *notiflog.Log // every notification sent, on every path
	tree     *treeNotes    // the directory's tree changed notifications
	log      *slog.Logger
	base     asn1tree.OID
	start    time.Time
	interval atomic.Int64 // time.Duration
	wake     chan struct{}

	mu      sync.Mutex
	dests   []traps.Dest
	sender  *traps.Sender // nil until Run
	master  MasterNotify
	masterQ chan masterNote

	conf []hotset.Def       // from the configuration file; under mu
	snmp map[string]snmpHot // created over SNMP (snmpwrite.go); under mu

	errs map[string]string // last error logged by hotset name; only run's goroutine uses it

	masterSent, masterFailed atomic.Uint64
	masterDown               atomic.Bool
	closed                   traps.Counts // of senders replaced by a reload
}

// initHotsets adds the Hotset context (empty without hotsets, so that a
// reload can add some), its Agent statistics and its reloader.
func (d *Daemon) initHotsets() error {
	defs, err := hotsetDefs(d.cfg)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	hs := &hotsets{conf: defs, snmp: loadSNMPHotsets(d.num, d.log)}
	eng, err := hotset.New(hs.allLocked(), d.cfg.Hotset.Exceptions, nil)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	log := d.log.With("part", "hotsets")
	notes, err := notiflog.Open(filepath.Join(d.cfg.StateDir, notiflog.File), d.cfg.Hotset.LogEntries, d.cfg.Hotset.LogMaxAge, nil, log)
	if err != nil {
		return err
	}
	hs.eng, hs.notes, hs.log = eng, notes, log
	hs.base, hs.start = d.cfg.Base, time.Now()
	hs.wake, hs.dests, hs.masterQ = make(chan struct{}, 1), trapDests(d.cfg), make(chan masterNote, 64)
	hs.interval.Store(int64(d.cfg.Hotset.Interval))
	d.hot = hs
	d.h.Add(hotset.Provider{E: eng})
	d.h.Add(notiflog.Provider{L: notes})
	if err := d.initDirectory(hs); err != nil {
		return err
	}
	d.AddAgentStats(hs.agentStats)
	d.AddReloader(Reloader{Name: "hotsets", Check: hs.check, Apply: hs.apply})
	return nil
}

// SetMasterNotify makes the hotsets' notifications go through the AgentX
// master as well (which delivers them to its own trap sinks).
func (d *Daemon) SetMasterNotify(f MasterNotify) {
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
	for i, d := range trapDests(c) {
		if err := d.Check(); err != nil {
			return fmt.Errorf("traps[%d].%w", i, err)
		}
	}
	return nil
}

func (hs *hotsets) apply(c *config.Config) {
	defs, _ := hotsetDefs(c) // checked
	hs.mu.Lock()
	hs.conf = defs
	all := hs.allLocked() // a configured name hides a row created over SNMP
	hs.mu.Unlock()
	_ = hs.eng.Replace(all)
	hs.eng.SetKeep(c.Hotset.Exceptions)
	_ = hs.notes.SetLimits(c.Hotset.LogEntries, c.Hotset.LogMaxAge) // checked
	hs.interval.Store(int64(c.Hotset.Interval))
	hs.tree.interval.Store(int64(c.Hotset.TreeChangedInterval))
	hs.mu.Lock()
	hs.dests = trapDests(c)
	old := hs.sender
	if old != nil {
		hs.sender, _ = traps.NewReporting(hs.dests, hs.log, hs.report)
	}
	hs.mu.Unlock()
	if old != nil {
		hs.mu.Lock()
		hs.closed = add(hs.closed, old.Counts())
		hs.mu.Unlock()
		go old.Close() // an inform in flight may take its timeout
	}
	select {
	case hs.wake <- struct{}{}:
	default:
	}
	hs.log.Info("hotsets reloaded", "hotsets", len(defs), "trap_destinations", len(hs.dests))
}

// run evaluates at once (which primes the counters' rates) and then at
// every interval until ctx is done.
func (hs *hotsets) run(ctx context.Context, h *spmi.Hierarchy) error {
	hs.mu.Lock()
	s, err := traps.NewReporting(hs.dests, hs.log, hs.report)
	if err != nil {
		hs.mu.Unlock()
		return err
	}
	hs.sender = s
	hs.mu.Unlock()
	defer func() {
		hs.mu.Lock()
		s := hs.sender
		hs.mu.Unlock()
		s.Close()
	}()
	go hs.masterLoop(ctx)
	go hs.tree.run(ctx, hs)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-hs.wake:
			t.Reset(time.Duration(hs.interval.Load()))
			continue
		case <-t.C:
		}
		for _, ev := range hs.eng.Tick(h) {
			hs.raise(ev)
		}
		hs.logErrors()
		hs.notes.Expire()
		t.Reset(time.Duration(hs.interval.Load()))
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

// raise logs an exception and sends a notification, as the hotset asks.
func (hs *hotsets) raise(ev hotset.Event) {
	d := ev.Def
	switch {
	case ev.Cleared:
		hs.log.Info("hotset cleared", "hotset", d.Name, "stat", d.Path(), "peer_set", ev.Parent,
			"rearm", d.Rearm, "peer", hotset.Peers(ev.Items))
	case d.Excp.Exceptions():
		hs.log.Warn("hotset exception", "hotset", d.Name, "severity", d.Severity, "stat", d.Path(),
			"peer_set", ev.Parent, "threshold", d.Threshold, "peers", hotset.Peers(ev.Items))
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
	s.Send(n)
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

// report records what a trap destination made of a notification.
func (hs *hotsets) report(n *traps.Notification, d traps.Dest, err error) {
	switch {
	case err != nil:
		hs.notes.Outcome(n.LogIndex, d.String(), false, "failed: "+err.Error())
	case d.Inform:
		hs.notes.Outcome(n.LogIndex, d.String(), true, "acknowledged")
	default:
		hs.notes.Outcome(n.LogIndex, d.String(), true, "sent")
	}
}

// Notification is the notification of a hotset event: snmpTrapOID.0 is
// base.0.<trap_no>; the VarBinds are the objects of the NOTIFICATION-TYPE
// in the order of its OBJECTS clause (mib.HotsetTrap: name, peer context,
// threshold, severity, hottest peer, its compared value, their units, the
// list of hot peers), then each hot item with its served value, hottest
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
	var bs []mib.Binding
	var err error
	if ev.Cleared {
		// mib.HotsetCleared: the peer and the value it fell to.
		n.Specific = int(mib.HotsetClearedNo)
		bs, err = mib.HotsetCleared.Bind(base, asn1tree.Str(d.Name), asn1tree.Str(ev.Parent),
			asn1tree.Int(int32(d.Threshold)), asn1tree.Int(int32(d.Rearm)), asn1tree.Int(int32(d.Severity)),
			asn1tree.Str(top.Name), asn1tree.Str(hotset.FormatValue(top.Value)), asn1tree.Str(top.Units))
	} else {
		bs, err = mib.HotsetTrap(uint32(d.TrapNo)).Bind(base, asn1tree.Str(d.Name), asn1tree.Str(ev.Parent),
			asn1tree.Int(int32(d.Threshold)), asn1tree.Int(int32(d.Severity)),
			asn1tree.Str(top.Name), asn1tree.Str(hotset.FormatValue(top.Value)), asn1tree.Str(top.Units),
			asn1tree.Str(hotset.Peers(ev.Items)))
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
		{Name: "sent", Descr: "Taken by a trap destination (informs: acknowledged)", ASN: 1, Max: 10, Val: ddswire.SiCounter},
		{Name: "failed", Descr: "Sends to a trap destination that failed", ASN: 2, Max: 10, Val: ddswire.SiCounter},
		{Name: "dropped", Descr: "Dropped for a full destination queue", ASN: 3, Max: 10, Val: ddswire.SiCounter},
		{Name: "down", Descr: "Trap destinations whose last send failed", ASN: 4, Max: 10, Val: ddswire.SiQuantity, Units: "destinations"},
		{Name: "mastersent", Descr: "Taken by the AgentX master", ASN: 5, Max: 10, Val: ddswire.SiCounter},
		{Name: "masterfailed", Descr: "Not taken by the AgentX master (failed or dropped)", ASN: 6, Max: 10, Val: ddswire.SiCounter},
	}
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
	return b.Stats(cx, TrapsStats, []spmiwire.Value{
		spmiwire.Uint(c.Sent), spmiwire.Uint(c.Failed), spmiwire.Uint(c.Dropped), spmiwire.Uint(uint64(c.Down)),
		spmiwire.Uint(hs.masterSent.Load()), spmiwire.Uint(hs.masterFailed.Load()),
	})
}
