package daemon

import (
	"github.com/perfagent/subagent/responder"
	"github.com/perfagent/subagent/spmi"
)

// The SNMP front ends report under Agent: Agent/snmp (30) for the
// standalone responder, Agent/agentx (31) for the AgentX session.
var (
	AgentXCx   = spmi.CxDesc{Name: "agentx", Descr: "AgentX session with the master agent", ASN: 31}
	AgentXStat = spmi.StatDesc{Name: "connected", Descr: "1 while registered with the master agent", ASN: 1, Max: 1, Val: spmi.SiQuantity, Units: "boolean"}

	ResponderCx    = spmi.CxDesc{Name: "snmp", Descr: "Standalone SNMP responder", ASN: 30}
	ResponderStats = []spmi.StatDesc{
		{Name: "inpkts", Descr: "SNMP messages received", ASN: 1, Max: 1000, Val: spmi.SiCounter},
		{Name: "badcommunity", Descr: "Messages dropped for a wrong community", ASN: 2, Max: 10, Val: spmi.SiCounter},
		{Name: "parseerrs", Descr: "Malformed messages dropped", ASN: 3, Max: 10, Val: spmi.SiCounter},
		{Name: "responses", Descr: "Responses sent", ASN: 4, Max: 1000, Val: spmi.SiCounter},
		{Name: "toobig", Descr: "tooBig responses", ASN: 5, Max: 10, Val: spmi.SiCounter},
		{Name: "getbulks", Descr: "GetBulk requests", ASN: 6, Max: 1000, Val: spmi.SiCounter},
	}
)

// AgentXExtra reports whether the AgentX session is registered.
func AgentXExtra(connected func() bool) Extra {
	return func(b *spmi.Builder, agent *spmi.Node) error {
		cx, err := b.Context(agent, &AgentXCx)
		if err != nil {
			return err
		}
		var v uint64
		if connected() {
			v = 1
		}
		return b.Stat(cx, &AgentXStat, spmi.Uint(v))
	}
}

// ResponderExtra reports the standalone responder's counters.
func ResponderExtra(counts func() responder.Counts) Extra {
	return func(b *spmi.Builder, agent *spmi.Node) error {
		cx, err := b.Context(agent, &ResponderCx)
		if err != nil {
			return err
		}
		c := counts()
		return b.Stats(cx, ResponderStats, []spmi.Value{
			spmi.Uint(c.InPkts), spmi.Uint(c.InBadCommunityNames), spmi.Uint(c.InASNParseErrs),
			spmi.Uint(c.OutGetResponses), spmi.Uint(c.OutTooBigs), spmi.Uint(c.InGetBulks),
		})
	}
}
