package hoststats

import (
	"github.com/prometheus/procfs"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

var icmpCx = spmi.CxDesc{Name: "ICMP", Descr: "Internet Control Message Protocol statistics", ASN: spmi.ASNICMP, Inst: ddswire.SiNoInst}

var icmpStats = []spmiwire.StatDesc{
	snmpCount("imsg", "Messages received", 1, 100, "messages"),
	snmpCount("omsg", "Messages sent", 2, 100, "messages"),
	snmpCount("ierror", "Messages received with errors", 3, 10, "messages"),
	snmpCount("iecho", "Echo requests received", 4, 10, "messages"),
	snmpCount("oecho", "Echo requests sent", 5, 10, "messages"),
	snmpCount("iechorep", "Echo replies received", 6, 10, "messages"),
	snmpCount("oechorep", "Echo replies sent", 7, 10, "messages"),
	snmpCount("idestunr", "Destination unreachable messages received", 8, 10, "messages"),
	snmpCount("odestunr", "Destination unreachable messages sent", 9, 10, "messages"),
}

func newICMP(r *resolved) spmi.Provider {
	return &snmpProvider{snmpSource: newSNMPSource(r), cx: &icmpCx, stats: icmpStats, values: func(s *procfs.ProcSnmp) []spmiwire.Value {
		c := &s.Icmp
		return []spmiwire.Value{
			optF(c.InMsgs), optF(c.OutMsgs), optF(c.InErrors), optF(c.InEchos), optF(c.OutEchos),
			optF(c.InEchoReps), optF(c.OutEchoReps), optF(c.InDestUnreachs), optF(c.OutDestUnreachs),
		}
	}}
}
