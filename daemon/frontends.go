package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/perfagent/subagent/agentx"
	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/notiflog"
	"github.com/perfagent/subagent/responder"
	"github.com/perfagent/subagent/spmi"
	"github.com/perfagent/subagent/usm"
)

// NewServing is the daemon `subagent run` starts: New with the SNMP
// front ends the configuration asks for, and the log level (level, which
// the caller's logger reads) taken again on every reload.
func NewServing(c *config.Config, log *slog.Logger, level *slog.LevelVar) (*Daemon, error) {
	d, err := New(c, log)
	if err != nil {
		return nil, err
	}
	if level != nil {
		d.addReloader(Reloader{Name: PartLog, Apply: func(c *config.Config) error { level.Set(LogLevel(c)); return nil }})
	}
	if err := d.addFrontends(); err != nil {
		d.Discard() // a refused start leaves nothing (New wrote nothing)
		return nil, err
	}
	return d, nil
}

// LogLevel is the level c's log.level names.
func LogLevel(c *config.Config) slog.Level {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(c.Log.Level)) // checked by config
	return lvl
}

// addFrontends attaches the SNMP front ends the configuration asks for.
func (d *Daemon) addFrontends() error {
	cfg, h := d.cfg, d.h
	// Both front ends answer from a snapshot that is at most min_age old, and
	// wait at most snmp_wait for a refresh so a slow source never makes the
	// master drop us. A request that goes on with a walk is answered from
	// the walk's snapshot instead, so a table read request after request
	// shows one moment.
	// The writable tables (snmpwrite.go) are served beside the
	// statistics; only the AgentX session takes Sets for them: the
	// standalone responder stays read-only (a community string on UDP
	// authenticates nothing).
	// The notification log is served as NOTIFICATION-LOG-MIB (mib-2 92)
	// beside them, its tree kept by the walk with the snapshot.
	// One wait in all: for the values read with requests, then for the
	// contexts read apart that the answer finds too old (spmi/fresh.go).
	w := d.writer
	nlm := d.notificationLogMIB()
	wait := cfg.Refresh.SNMPWait
	// One memory budget for the walks of both front ends: a snapshot both
	// keep counts once (refresh.walk_memory_mb).
	walks := asn1tree.NewWalkBudget(int64(cfg.Refresh.WalkMemoryMB) << 20)
	src := func(at any) (asn1tree.View, any) {
		start := time.Now()
		m, _ := at.(*moment)
		if m == nil {
			m = &moment{snap: h.FreshWithin(wait), nlm: nlm.View()}
		}
		return asn1tree.Join(asn1tree.Join(m.answer(wait-time.Since(start)), w.View()), m.nlm), m
	}
	if cfg.AgentX != "none" {
		s := cfg.AgentXSession
		nlmRegs := nlmRegistrations(uint8(s.Priority))
		sub, err := agentx.NewWithSource(agentx.Config{
			Address:       cfg.AgentX,
			ID:            cfg.Base,
			Description:   s.Description,
			Timeout:       s.Timeout,
			Priority:      uint8(s.Priority),
			Subtrees:      []asn1tree.OID{cfg.Base},
			Registrations: nlmRegs,
			Capabilities:  []agentx.Capability{{ID: cfg.Base, Description: s.Description}},
			PingInterval:  s.PingInterval,
			BackoffMax:    s.MaxBackoff,
			Logger:        d.log.With("frontend", "agentx"),
			Writer:        w,
			SharedWalks:   walks,
		}, src)
		if err != nil {
			return err
		}
		d.addFrontend(agentxFrontend{sub})
		d.setMasterNotify(sub.Notify) // hotset notifications go through the master too
		d.addAgentStats(agentXStats(sub.Connected, sub.DataAge, sub.WalkFallbacks))
	}
	if cfg.Listen != "none" {
		return d.addResponder(src, walks)
	}
	return nil
}

// moment is what one request, or one walk, is answered from.
type moment struct {
	nlm asn1tree.View

	mu   sync.Mutex
	snap *spmi.Snapshot
	last *spmi.Answer
}

// answer answers from the moment's snapshot: the one its last answer
// moved to if it did (it waited for a context read apart), so that the
// rest of a walk sees the reading its first request waited for.
func (m *moment) answer(wait time.Duration) *spmi.Answer {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last != nil {
		if s := m.last.Moved(); s != nil {
			m.snap = s
		}
	}
	m.last = m.snap.AnswerWithin(max(wait, 0))
	return m.last
}

// Pinned tells the walks what m keeps alive: its snapshot, which the
// moments of other requests share (asn1tree.Walks.Budget).
func (m *moment) Pinned() (any, int64) { return m.snap.Pinned() }

// nlmRegistrations register NOTIFICATION-LOG-MIB with the master: the
// whole module, and above snmpd's own priority the parts snmpd 5.9
// registers for its own log, which stays empty under the daemon's
// (notiflog.Registrations; docs/MIB.md). They are optional: where another
// subagent of the master serves the log already (a second daemon), this
// one serves its own tree without it.
func nlmRegistrations(priority uint8) []agentx.Registration {
	if priority == 0 {
		priority = agentx.DefaultPriority
	}
	tree, exact, prio := notiflog.Registrations(priority)
	regs := []agentx.Registration{{Subtree: tree, Priority: priority, Optional: true}}
	for _, o := range exact {
		regs = append(regs, agentx.Registration{Subtree: o, Priority: prio, Optional: true})
	}
	return regs
}

// addResponder adds the standalone responder, answering as the daemon's
// SNMPv3 engine (the one its traps are sent from; snmpEngineBoots counted
// and written before anything answers). Without its engine's state (read
// and written) the responder answers v1/v2c only, unless snmp.users asks
// for v3: then the daemon does not start.
func (d *Daemon) addResponder(src asn1tree.Source, walks *asn1tree.WalkBudget) error {
	cfg := d.cfg
	eng, err := d.engine.get()
	if err != nil {
		fix := "make the state directory writable by the daemon's user, or choose another with --state-dir"
		if len(cfg.SNMP.Users) > 0 {
			return fmt.Errorf("%w: snmp.users needs it (snmpEngineBoots is counted at every start); %s", err, fix)
		}
		d.log.Warn("SNMPv3 is off until a restart: the engine's state cannot be read or written; v1/v2c are served",
			"err", err, "fix", fix)
	}
	rc, err := responderConfig(cfg, eng)
	if err != nil {
		return err
	}
	rc.SharedWalks = walks
	log := d.log.With("frontend", "responder")
	warnMD5(cfg, log)
	r, err := responder.NewWithSource(rc, src, log)
	if err != nil {
		return err
	}
	d.addFrontend(r)
	p := &responderPart{r: r, eng: eng, log: log, users: v3Users(rc)}
	d.addReloader(Reloader{Name: PartResponder, Check: p.check, Apply: p.apply})
	d.addAgentStats(responderStats(r.Stats().Snapshot))
	return nil
}

// responderPart reloads the responder: the socket stays; community,
// users and limits switch on SIGHUP, all at once. Keys are localized
// once, in check. Reload calls check and apply one reload at a time.
type responderPart struct {
	r     *responder.Responder
	eng   usm.Engine
	log   *slog.Logger
	users []responder.User // applied

	checked *config.Config // whose settings next holds
	next    responder.Config
}

func (p *responderPart) check(c *config.Config) error {
	rc, err := responderConfig(c, p.eng)
	if err == nil {
		err = responder.Check(rc)
	}
	if err != nil {
		return err
	}
	p.checked, p.next = c, rc
	return nil
}

func (p *responderPart) apply(c *config.Config) error {
	if p.checked != c {
		return nil // check of this configuration failed: nothing to apply
	}
	p.checked = nil
	if err := p.r.Update(p.next); err != nil {
		return fmt.Errorf("the running responder settings stay: %w", err)
	}
	warnMD5(c, p.log)
	users := v3Users(p.next)
	added, removed, changed := userChanges(p.users, users)
	p.users = users
	p.log.Info("responder settings applied", "v1_v2c", p.next.Community != "", "snmpv3_users", len(users),
		"added", added, "removed", removed, "changed", changed)
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
	users, err := responderUsers(c, eng.ID)
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
		s.SysDescr = responder.DefaultSysDescr("subagent", Version)
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
