package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/perfagent/subagent/agentx"
	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/daemon"
	"github.com/perfagent/subagent/responder"
	"github.com/perfagent/subagent/spmi"
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
	w := d.WritableTables()
	src := func(at any) (asn1tree.View, any) {
		s, _ := at.(*spmi.Snapshot)
		if s == nil {
			s = h.FreshWithin(cfg.Refresh.SNMPWait)
		}
		return asn1tree.Join(s.View(), w.View()), s
	}
	if cfg.AgentX != "none" {
		s := cfg.AgentXSession
		sub, err := agentx.NewWithSource(agentx.Config{
			Address:      cfg.AgentX,
			ID:           cfg.Base,
			Description:  s.Description,
			Timeout:      s.Timeout,
			Priority:     uint8(s.Priority),
			Subtrees:     []asn1tree.OID{cfg.Base},
			Capabilities: []agentx.Capability{{ID: cfg.Base, Description: s.Description}},
			PingInterval: s.PingInterval,
			BackoffMax:   s.MaxBackoff,
			Logger:       log.With("frontend", "agentx"),
			Writer:       w,
		}, src)
		if err != nil {
			return err
		}
		d.AddFrontend(agentxFrontend{sub})
		d.SetMasterNotify(sub.Notify) // hotset notifications go through the master too
		d.AddAgentStats(daemon.AgentXStats(sub.Connected, sub.DataAge))
	}
	if cfg.Listen != "none" {
		r, err := responder.NewWithSource(responderConfig(cfg), src, log.With("frontend", "responder"))
		if err != nil {
			return err
		}
		d.AddFrontend(r)
		// The socket stays; community and limits switch on SIGHUP.
		d.AddReloader(daemon.Reloader{Name: daemon.PartResponder,
			Check: func(c *config.Config) error { return responder.Check(responderConfig(c)) },
			Apply: func(c *config.Config) { _ = r.Update(responderConfig(c)) }, // checked
		})
		d.AddAgentStats(daemon.ResponderExtra(r.Stats().Snapshot))
	}
	return nil
}

func responderConfig(c *config.Config) responder.Config {
	return responder.Config{Listen: c.Listen, Community: c.SNMP.Community,
		MaxRepetitions: c.SNMP.MaxRepetitions, MaxMsgSize: c.SNMP.MaxMsgSize, System: systemGroup(c)}
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
