package main

import (
	"context"
	"log/slog"

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
	// master drop us.
	view := func() asn1tree.View { return h.FreshWithin(cfg.Refresh.SNMPWait).View() }
	if cfg.AgentX != "none" {
		s := cfg.AgentXSession
		sub, err := agentx.New(agentx.Config{
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
		}, view)
		if err != nil {
			return err
		}
		d.AddFrontend(agentxFrontend{sub})
		d.AddAgentStats(agentxStats(sub))
	}
	if cfg.Listen != "none" {
		r, err := responder.New(responder.Config{
			Listen:         cfg.Listen,
			Community:      cfg.SNMP.Community,
			MaxRepetitions: cfg.SNMP.MaxRepetitions,
			MaxMsgSize:     cfg.SNMP.MaxMsgSize,
		}, view, log.With("frontend", "responder"))
		if err != nil {
			return err
		}
		d.AddFrontend(r)
		d.AddAgentStats(responderStats(r))
	}
	return nil
}

type agentxFrontend struct{ *agentx.Subagent }

func (agentxFrontend) Name() string { return "agentx" }

func (f agentxFrontend) Run(ctx context.Context) error { return f.Subagent.Run(ctx) }

var (
	agentxCx    = spmi.CxDesc{Name: "agentx", Descr: "AgentX session with the master agent", ASN: 31}
	agentxStat  = spmi.StatDesc{Name: "connected", Descr: "1 while registered with the master agent", ASN: 1, Max: 1, Val: spmi.SiQuantity}
	respCx      = spmi.CxDesc{Name: "snmp", Descr: "Standalone SNMP responder", ASN: 30}
	respStatTpl = []spmi.StatDesc{
		{Name: "inpkts", Descr: "SNMP messages received", ASN: 1, Max: 1000, Val: spmi.SiCounter},
		{Name: "badcommunity", Descr: "Messages dropped for a wrong community", ASN: 2, Max: 10, Val: spmi.SiCounter},
		{Name: "parseerrs", Descr: "Malformed messages dropped", ASN: 3, Max: 10, Val: spmi.SiCounter},
		{Name: "responses", Descr: "Responses sent", ASN: 4, Max: 1000, Val: spmi.SiCounter},
		{Name: "toobig", Descr: "tooBig responses", ASN: 5, Max: 10, Val: spmi.SiCounter},
		{Name: "getbulks", Descr: "GetBulk requests", ASN: 6, Max: 1000, Val: spmi.SiCounter},
	}
)

func agentxStats(sub *agentx.Subagent) daemon.Extra {
	return func(b *spmi.Builder, agent *spmi.Node) error {
		cx, err := b.Context(agent, &agentxCx)
		if err != nil {
			return err
		}
		var v uint64
		if sub.Connected() {
			v = 1
		}
		return b.Stat(cx, &agentxStat, spmi.Uint(v))
	}
}

func responderStats(r *responder.Responder) daemon.Extra {
	return func(b *spmi.Builder, agent *spmi.Node) error {
		cx, err := b.Context(agent, &respCx)
		if err != nil {
			return err
		}
		c := r.Stats().Snapshot()
		return b.Stats(cx, respStatTpl, []spmi.Value{
			spmi.Uint(c.InPkts), spmi.Uint(c.InBadCommunityNames), spmi.Uint(c.InASNParseErrs),
			spmi.Uint(c.OutGetResponses), spmi.Uint(c.OutTooBigs), spmi.Uint(c.InGetBulks),
		})
	}
}
