package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/perfagent/subagent/agentx"
	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/daemon"
	"github.com/perfagent/subagent/notiflog"
	"github.com/perfagent/subagent/responder"
	"github.com/perfagent/subagent/spmi"
	"github.com/perfagent/subagent/usm"
)

// addFrontends attaches the SNMP front ends the configuration asks for.
func addFrontends(d *daemon.Daemon, cfg *config.Config, log *slog.Logger) error {
	h := d.Hierarchy()
	// Both front ends answer from a snapshot that is at most min_age old, and
	// wait at most snmp_wait for a refresh so a slow source never makes the
	// master drop us. A request that goes on with a walk is answered from
	// the walk's snapshot instead, so a table read request after request
	// shows one moment.
	// The writable tables (daemon/snmpwrite.go) are served beside the
	// statistics; only the AgentX session takes Sets for them: the
	// standalone responder stays read-only (a community string on UDP
	// authenticates nothing).
	// The notification log is served as NOTIFICATION-LOG-MIB (mib-2 92)
	// beside them, its tree kept by the walk with the snapshot.
	w := d.WritableTables()
	nlm := d.NotificationLogMIB()
	// One memory budget for the walks of both front ends: a snapshot both
	// keep counts once (refresh.walk_memory_mb).
	walks := asn1tree.NewWalkBudget(int64(cfg.Refresh.WalkMemoryMB) << 20)
	src := func(at any) (asn1tree.View, any) {
		m, _ := at.(*moment)
		if m == nil {
			m = &moment{snap: h.FreshWithin(cfg.Refresh.SNMPWait), nlm: nlm.View()}
		}
		return asn1tree.Join(asn1tree.Join(m.snap.View(), w.View()), m.nlm), m
	}
	if cfg.AgentX != "none" {
		s := cfg.AgentXSession
		nlmTree, nlmRegs := nlmRegistrations(uint8(s.Priority))
		sub, err := agentx.NewWithSource(agentx.Config{
			Address:       cfg.AgentX,
			ID:            cfg.Base,
			Description:   s.Description,
			Timeout:       s.Timeout,
			Priority:      uint8(s.Priority),
			Subtrees:      []asn1tree.OID{cfg.Base, nlmTree},
			Registrations: nlmRegs,
			Capabilities:  []agentx.Capability{{ID: cfg.Base, Description: s.Description}},
			PingInterval:  s.PingInterval,
			BackoffMax:    s.MaxBackoff,
			Logger:        log.With("frontend", "agentx"),
			Writer:        w,
			SharedWalks:   walks,
		}, src)
		if err != nil {
			return err
		}
		d.AddFrontend(agentxFrontend{sub})
		d.SetMasterNotify(sub.Notify) // hotset notifications go through the master too
		d.AddAgentStats(daemon.AgentXStats(sub.Connected, sub.DataAge, sub.WalkFallbacks))
	}
	if cfg.Listen != "none" {
		return addResponder(d, cfg, src, walks, log)
	}
	return nil
}

// moment is what one request, or one walk, is answered from.
type moment struct {
	snap *spmi.Snapshot
	nlm  asn1tree.View
}

// Pinned tells the walks what m keeps alive: its snapshot, which the
// moments of other requests share (asn1tree.Walks.Budget).
func (m *moment) Pinned() (any, int64) { return m.snap.Pinned() }

// nlmRegistrations register NOTIFICATION-LOG-MIB with the master: the
// whole module, and above snmpd's own priority the parts snmpd 5.9
// registers for its own log, which stays empty under the daemon's
// (notiflog.Registrations; docs/MIB.md).
func nlmRegistrations(priority uint8) (asn1tree.OID, []agentx.Registration) {
	if priority == 0 {
		priority = agentx.DefaultPriority
	}
	tree, exact, prio := notiflog.Registrations(priority)
	regs := make([]agentx.Registration, len(exact))
	for i, o := range exact {
		regs[i] = agentx.Registration{Subtree: o, Priority: prio}
	}
	return tree, regs
}

// addResponder adds the standalone responder, answering as the daemon's
// SNMPv3 engine (the one its traps are sent from; snmpEngineBoots counted
// and written before anything answers). Without its engine's state (read
// and written) the responder answers v1/v2c only, unless snmp.users asks
// for v3: then the daemon does not start.
func addResponder(d *daemon.Daemon, cfg *config.Config, src asn1tree.Source, walks *asn1tree.WalkBudget, log *slog.Logger) error {
	eng, err := d.Engine()
	if err != nil {
		fix := "make the state directory writable by the daemon's user, or choose another with --state-dir"
		if len(cfg.SNMP.Users) > 0 {
			return fmt.Errorf("%w: snmp.users needs it (snmpEngineBoots is counted at every start); %s", err, fix)
		}
		log.Warn("SNMPv3 is off until a restart: the engine's state cannot be read or written; v1/v2c are served",
			"err", err, "fix", fix)
	}
	rc, err := responderConfig(cfg, eng)
	if err != nil {
		return err
	}
	rc.SharedWalks = walks
	log = log.With("frontend", "responder")
	warnMD5(cfg, log)
	r, err := responder.NewWithSource(rc, src, log)
	if err != nil {
		return err
	}
	d.AddFrontend(r)
	// The socket stays; community, users and limits switch on SIGHUP,
	// all at once. Keys are localized once, in Check.
	var mu sync.Mutex
	var pending *config.Config
	var next responder.Config
	users := v3Users(rc)
	d.AddReloader(daemon.Reloader{Name: daemon.PartResponder,
		Check: func(c *config.Config) error {
			rc, err := responderConfig(c, eng)
			if err == nil {
				err = responder.Check(rc)
			}
			if err != nil {
				return err
			}
			mu.Lock()
			pending, next = c, rc
			mu.Unlock()
			return nil
		},
		Apply: func(c *config.Config) error {
			mu.Lock()
			defer mu.Unlock()
			if pending != c {
				return nil // Check of this configuration failed: nothing to apply
			}
			if err := r.Update(next); err != nil {
				return fmt.Errorf("the running responder settings stay: %w", err)
			}
			warnMD5(c, log)
			added, removed, changed := daemon.UserChanges(users, v3Users(next))
			users, pending = v3Users(next), nil
			log.Info("responder settings applied", "v1_v2c", next.Community != "", "snmpv3_users", len(users),
				"added", added, "removed", removed, "changed", changed)
			return nil
		},
	})
	d.AddAgentStats(daemon.ResponderExtra(r.Stats().Snapshot))
	return nil
}

// v3Users are rc's SNMPv3 users; none when SNMPv3 is off.
func v3Users(rc responder.Config) []responder.User {
	if rc.V3 == nil {
		return nil
	}
	return rc.V3.Users
}

// warnMD5 warns of each user allowed HMAC-MD5.
func warnMD5(c *config.Config, log *slog.Logger) {
	for i, u := range c.SNMP.Users {
		if strings.EqualFold(u.AuthProtocol, "MD5") {
			log.Warn("SNMPv3 user with HMAC-MD5 (allow_md5): prefer SHA256 or stronger", "key", fmt.Sprintf("snmp.users[%d]", i), "user", u.User)
		}
	}
}

// responderConfig translates the configuration for the responder; the
// SNMPv3 keys are localized here (a second or so per hundred passwords).
// An engine without ID is SNMPv3 off (its state could not be written at start).
func responderConfig(c *config.Config, eng usm.Engine) (responder.Config, error) {
	rc := responder.Config{Listen: c.Listen, Community: c.SNMP.Community,
		MaxRepetitions: c.SNMP.MaxRepetitions, MaxMsgSize: c.SNMP.MaxMsgSize, System: systemGroup(c)}
	rc.AuthFailures, rc.Discoveries = c.SNMP.Throttle.Limits()
	rc.WalkBudget = int64(c.Refresh.WalkMemoryMB) << 20
	if eng.ID == nil {
		if len(c.SNMP.Users) > 0 {
			return responder.Config{}, errors.New("snmp.users: SNMPv3 is off since the start, which could not read or write the engine's state (see the log); fix the state directory and restart")
		}
		return rc, nil
	}
	users, err := daemon.ResponderUsers(c, eng.ID)
	if err != nil {
		return responder.Config{}, err
	}
	rc.V3 = &responder.V3{EngineID: eng.ID, Boots: eng.Boots, Start: eng.Start, Users: users}
	return rc, nil
}

// systemGroup is the responder's SNMPv2-MIB system group: sysObjectID and
// the module's sysORID are the base OID (SUBAGENT-MIB's MODULE-IDENTITY);
// empty strings take the host name and a description from uname.
func systemGroup(c *config.Config) *responder.System {
	s := c.SNMP.SNMPSystem
	if s.SysName == "" {
		s.SysName, _ = os.Hostname()
	}
	if s.SysDescr == "" {
		s.SysDescr = responder.DefaultSysDescr("subagent", daemon.Version)
	}
	or := "SUBAGENT-MIB: " + c.AgentXSession.Description
	if len(or) > 255 {
		or = or[:255] // a DisplayString; the description is ASCII
	}
	return &responder.System{Descr: s.SysDescr, ObjectID: c.Base, Contact: s.SysContact, Name: s.SysName,
		Location: s.SysLocation, ORDescr: or}
}

type agentxFrontend struct{ *agentx.Subagent }

func (agentxFrontend) Name() string { return "agentx" }

func (f agentxFrontend) Run(ctx context.Context) error { return f.Subagent.Run(ctx) }
