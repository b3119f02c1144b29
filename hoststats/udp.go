package hoststats

import (
	"github.com/prometheus/procfs"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

var udpCx = spmi.CxDesc{Name: "UDP", Descr: "User Datagram Protocol statistics", ASN: spmi.ASNUDP, Inst: ddswire.SiNoInst}

var udpStats = []spmiwire.StatDesc{
	snmpCount("idatagram", "Datagrams delivered to users", 1, 10000, "datagrams"),
	snmpCount("odatagram", "Datagrams sent", 2, 10000, "datagrams"),
	snmpCount("noport", "Datagrams received for a port without listener", 3, 10, "datagrams"),
	snmpCount("ierror", "Datagrams received that could not be delivered", 4, 10, "datagrams"),
	snmpCount("rcvbuferr", "Datagrams lost for a full receive buffer", 5, 10, "datagrams"),
	snmpCount("sndbuferr", "Datagrams lost for a full send buffer", 6, 10, "datagrams"),
}

func newUDP(r *resolved) spmi.Provider {
	return &snmpProvider{snmpSource: newSNMPSource(r), cx: &udpCx, stats: udpStats, values: func(s *procfs.ProcSnmp) []spmiwire.Value {
		u := &s.Udp
		return []spmiwire.Value{
			optF(u.InDatagrams), optF(u.OutDatagrams), optF(u.NoPorts), optF(u.InErrors),
			optF(u.RcvbufErrors), optF(u.SndbufErrors),
		}
	}}
}
