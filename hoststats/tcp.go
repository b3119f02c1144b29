package hoststats

import (
	"github.com/prometheus/procfs"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

var tcpCx = spmi.CxDesc{Name: "TCP", Descr: "Transmission Control Protocol statistics", ASN: spmi.ASNTCP, Inst: ddswire.SiNoInst}

var tcpStats = []spmiwire.StatDesc{
	snmpCount("activeopen", "Connections opened actively", 1, 100, "connections"),
	snmpCount("passiveopen", "Connections opened passively", 2, 100, "connections"),
	snmpCount("attemptfail", "Failed connection attempts", 3, 10, "connections"),
	snmpCount("estabreset", "Resets of established connections", 4, 10, "connections"),
	{Name: "currestab", Descr: "Connections established or closing", ASN: 5, Max: 1000, Val: ddswire.SiQuantity, Data: spmiwire.SiLong, Units: "connections"},
	snmpCount("isegment", "Segments received", 6, 10000, "segments"),
	snmpCount("osegment", "Segments sent", 7, 10000, "segments"),
	snmpCount("retrans", "Segments retransmitted", 8, 100, "segments"),
	snmpCount("ierror", "Segments received in error", 9, 10, "segments"),
	snmpCount("orst", "Segments sent with the RST flag", 10, 10, "segments"),
}

func newTCP(r *resolved) spmi.Provider {
	return &snmpProvider{snmpSource: newSNMPSource(r), cx: &tcpCx, stats: tcpStats, values: func(s *procfs.ProcSnmp) []spmiwire.Value {
		t := &s.Tcp
		return []spmiwire.Value{
			optF(t.ActiveOpens), optF(t.PassiveOpens), optF(t.AttemptFails), optF(t.EstabResets),
			optF(t.CurrEstab), optF(t.InSegs), optF(t.OutSegs), optF(t.RetransSegs),
			optF(t.InErrs), optF(t.OutRsts),
		}
	}}
}
