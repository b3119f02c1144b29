package hoststats

import (
	"github.com/prometheus/procfs"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

var ipCx = spmi.CxDesc{Name: "IP", Descr: "Internet Protocol (IPv4) statistics", ASN: spmi.ASNIP, Inst: ddswire.SiNoInst}

var ipStats = []spmiwire.StatDesc{
	snmpCount("ipacket", "Datagrams received", 1, 10000, "datagrams"),
	snmpCount("opacket", "Datagrams sent by local protocols", 2, 10000, "datagrams"),
	snmpCount("forward", "Datagrams forwarded", 3, 10000, "datagrams"),
	snmpCount("deliver", "Datagrams delivered to local protocols", 4, 10000, "datagrams"),
	snmpCount("idiscard", "Received datagrams discarded", 5, 10, "datagrams"),
	snmpCount("odiscard", "Outgoing datagrams discarded", 6, 10, "datagrams"),
	snmpCount("noroute", "Outgoing datagrams without a route", 7, 10, "datagrams"),
	snmpCount("reasmfail", "Reassembly failures", 8, 10, "failures"),
	snmpCount("fragcreate", "Fragments created", 9, 1000, "fragments"),
	snmpCount("ihdrerror", "Datagrams received with header errors", 10, 10, "datagrams"),
	snmpCount("iaddrerror", "Datagrams received with a bad address", 11, 10, "datagrams"),
}

func newIP(r *resolved) spmi.Provider {
	return &snmpProvider{snmpSource: newSNMPSource(r), cx: &ipCx, stats: ipStats, values: func(s *procfs.ProcSnmp) []spmiwire.Value {
		ip := &s.Ip
		return []spmiwire.Value{
			optF(ip.InReceives), optF(ip.OutRequests), optF(ip.ForwDatagrams), optF(ip.InDelivers),
			optF(ip.InDiscards), optF(ip.OutDiscards), optF(ip.OutNoRoutes), optF(ip.ReasmFails),
			optF(ip.FragCreates), optF(ip.InHdrErrors), optF(ip.InAddrErrors),
		}
	}}
}
