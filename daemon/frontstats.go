package daemon

import (
	"time"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/dds"
	"github.com/perfagent/subagent/responder"
	"github.com/perfagent/subagent/rtimearm"
	"github.com/perfagent/subagent/spmi"
)

// The SNMP front ends report under Agent: Agent/snmp (30) for the
// standalone responder, Agent/agentx (31) for the AgentX session.
var (
	AgentXCx   = spmi.CxDesc{Name: "agentx", Descr: "AgentX session with the master agent", ASN: spmi.ASNAgentX}
	AgentXStat = spmiwire.StatDesc{Name: "connected", Descr: "1 while registered with the master agent", ASN: 1, Max: 1, Val: ddswire.SiQuantity, Form: spmiwire.FormBool}
	// AgentXAgeStats follow connected, then AgentXWalkStat.
	AgentXAgeStats = dataAgeStats(2)
	AgentXWalkStat = walkFallbackStat(4)

	ResponderCx    = spmi.CxDesc{Name: "snmp", Descr: "Standalone SNMP responder", ASN: spmi.ASNAgentSNMP}
	ResponderStats = []spmiwire.StatDesc{
		{Name: "inpkts", Descr: "SNMP messages received", ASN: 1, Max: 1000, Val: ddswire.SiCounter},
		{Name: "badcommunity", Descr: "Messages dropped for a wrong community", ASN: 2, Max: 10, Val: ddswire.SiCounter},
		{Name: "parseerrs", Descr: "Malformed messages dropped", ASN: 3, Max: 10, Val: ddswire.SiCounter},
		{Name: "responses", Descr: "Responses sent", ASN: 4, Max: 1000, Val: ddswire.SiCounter},
		{Name: "toobig", Descr: "tooBig responses", ASN: 5, Max: 10, Val: ddswire.SiCounter},
		{Name: "getbulks", Descr: "GetBulk requests", ASN: 6, Max: 1000, Val: ddswire.SiCounter},
	}
	// ResponderAgeStats follow ResponderStats.
	ResponderAgeStats = dataAgeStats(7)
	// ResponderUSMStats follow them: the usmStats counters (RFC 3414),
	// what SNMPv3 requests were refused for, and what the per-source
	// failure limits left unanswered.
	ResponderUSMStats = []spmiwire.StatDesc{
		{Name: "unsupseclevels", Descr: "SNMPv3 messages at a level the user lacks", ASN: 9, Max: 10, Val: ddswire.SiCounter},
		{Name: "notintimewindows", Descr: "SNMPv3 messages outside the 150 s time window", ASN: 10, Max: 10, Val: ddswire.SiCounter},
		{Name: "unknownusers", Descr: "SNMPv3 messages from an unknown user", ASN: 11, Max: 10, Val: ddswire.SiCounter},
		{Name: "unknownengineids", Descr: "SNMPv3 messages for another engine ID (discovery)", ASN: 12, Max: 10, Val: ddswire.SiCounter},
		{Name: "wrongdigests", Descr: "SNMPv3 messages with a wrong digest (password)", ASN: 13, Max: 10, Val: ddswire.SiCounter},
		{Name: "decrypterrors", Descr: "SNMPv3 messages that could not be decrypted", ASN: 14, Max: 10, Val: ddswire.SiCounter},
		{Name: "throttled", Descr: "SNMPv3 messages dropped by per-source limits (snmp.throttle)", ASN: 15, Max: 10, Val: ddswire.SiCounter},
	}
	// ResponderWalkStat follows them.
	ResponderWalkStat = walkFallbackStat(16)
)

// walkFallbackStat counts the walks a front end answered from the current
// moment, not their own, for refresh.walk_memory_mb.
func walkFallbackStat(asn uint32) spmiwire.StatDesc {
	return spmiwire.StatDesc{Name: "walkfallbacks", Descr: "Walks moved to the current snapshot (refresh.walk_memory_mb)",
		ASN: asn, Max: 10, Val: ddswire.SiCounter}
}

// dataAgeStats describe the age of the data a front end answered from
// (collected values; the oldest one an answer read), numbered from asn.
func dataAgeStats(asn uint32) []spmiwire.StatDesc {
	return []spmiwire.StatDesc{
		{Name: "dataage", Descr: "Age of the oldest value in the last answer",
			ASN: asn, Max: 10000, Val: ddswire.SiQuantity, Units: "milliseconds"},
		{Name: "maxdataage", Descr: "Largest dataage of the last 30 to 60 seconds",
			ASN: asn + 1, Max: 10000, Val: ddswire.SiQuantity, Units: "milliseconds"},
	}
}

func ageValues(last, largest time.Duration) []spmiwire.Value {
	return []spmiwire.Value{spmiwire.Uint(uint64(last.Milliseconds())), spmiwire.Uint(uint64(largest.Milliseconds()))}
}

// agentXStats reports whether the AgentX session is registered, how old
// the data of its answers was (agentx.Subagent.DataAge) and how many walks
// fell back to the current moment (agentx.Subagent.WalkFallbacks).
func agentXStats(connected func() bool, dataAge func() (last, largest time.Duration), fellBack func() uint64) Extra {
	return func(b *spmi.Builder, agent *spmi.Node) error {
		cx, err := b.Context(agent, &AgentXCx)
		if err != nil {
			return err
		}
		var v uint64
		if connected() {
			v = 1
		}
		if err := b.Stat(cx, &AgentXStat, spmiwire.Uint(v)); err != nil {
			return err
		}
		if err := b.Stats(cx, AgentXAgeStats, ageValues(dataAge())); err != nil {
			return err
		}
		return b.Stat(cx, &AgentXWalkStat, spmiwire.Uint(fellBack()))
	}
}

// responderStats reports the standalone responder's counters, how old
// the data of its answers was, and its usmStats.
func responderStats(counts func() responder.Counts) Extra {
	return func(b *spmi.Builder, agent *spmi.Node) error {
		cx, err := b.Context(agent, &ResponderCx)
		if err != nil {
			return err
		}
		c := counts()
		if err := b.Stats(cx, ResponderStats, []spmiwire.Value{
			spmiwire.Uint(c.InPkts), spmiwire.Uint(c.InBadCommunityNames), spmiwire.Uint(c.InASNParseErrs),
			spmiwire.Uint(c.OutGetResponses), spmiwire.Uint(c.OutTooBigs), spmiwire.Uint(c.InGetBulks),
		}); err != nil {
			return err
		}
		if err := b.Stats(cx, ResponderAgeStats, ageValues(c.DataAge, c.MaxDataAge)); err != nil {
			return err
		}
		if err := b.Stats(cx, ResponderUSMStats, []spmiwire.Value{
			spmiwire.Uint(c.UnsupportedSecLevels), spmiwire.Uint(c.NotInTimeWindows), spmiwire.Uint(c.UnknownUserNames),
			spmiwire.Uint(c.UnknownEngineIDs), spmiwire.Uint(c.WrongDigests), spmiwire.Uint(c.DecryptionErrors),
			spmiwire.Uint(c.Throttled),
		}); err != nil {
			return err
		}
		return b.Stat(cx, &ResponderWalkStat, spmiwire.Uint(c.WalkFallbacks))
	}
}

// AddReferenceStats adds, at zero, the Agent statistics of the parts a
// configuration may add (the front ends, DDS, ARM), so that the tree
// shows all of them whatever runs: the MIB's reference tree.
func (d *Daemon) AddReferenceStats() {
	d.addAgentStats(agentXStats(func() bool { return false }, func() (last, largest time.Duration) { return 0, 0 }, func() uint64 { return 0 }))
	d.addAgentStats(responderStats(func() responder.Counts { return responder.Counts{} }))
	d.addAgentStats(ddsStats(func() dds.Stats { return dds.Stats{} }))
	d.addAgentStats(armStats(func() rtimearm.RingUse { return rtimearm.RingUse{} }))
}
