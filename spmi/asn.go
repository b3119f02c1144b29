package spmi

// The top-level ASN.1 numbers of the hierarchy (docs/TREE.md), in one
// place so that no two providers claim one: the providers and the MIB
// generator take their numbers from here.
const (
	ASNNotifications uint32 = 0 // the MIB's notifications, base.0.N
	ASNCPU           uint32 = 1
	ASNMem           uint32 = 2
	ASNPagSp         uint32 = 3
	ASNDisk          uint32 = 4
	ASNLAN           uint32 = 5
	ASNIP            uint32 = 6
	ASNTCP           uint32 = 7
	ASNUDP           uint32 = 8
	ASNICMP          uint32 = 9
	ASNProc          uint32 = 10
	ASNFS            uint32 = 11
	ASNAgent         uint32 = 12
	ASNRTime         uint32 = 13 // RTime/ARM (13.1) and RTime/LAN (13.2) share it
	ASNHotset        uint32 = 14
	ASNNotifLog      uint32 = 15 // the notifications sent (notiflog)
	ASNDirectory     uint32 = 16 // the tree described (directory)
	ASNDerived       uint32 = 17 // derived statistics: named expressions (derive)
	ASNAlarm         uint32 = 18 // alarms on expressions, one row per instance (derive)
	ASNSLO           uint32 = 19 // service level objectives of ARM transactions (slo)
	ASNDDS           uint32 = 99
	ASNConformance   uint32 = 100 // the MIB's conformance statements
	// ASNWritable holds the tables managers write over SNMP through the
	// AgentX master (daemon/snmpwrite.go): hotsetDefTable (1),
	// rTimeLANHostTable (2).
	ASNWritable uint32 = 110
	// ASNNotifLogExt holds notifLogOutcomeTable (1), the notification
	// log's delivery outcomes beside NOTIFICATION-LOG-MIB's nlmLogTable.
	ASNNotifLogExt uint32 = 111
)

// The numbers below Agent (the daemon's own statistics) and RTime.
const (
	ASNAgentProv  uint32 = 20 // Agent/prov: one instance per provider
	ASNAgentSNMP  uint32 = 30 // Agent/snmp: the standalone responder
	ASNAgentX     uint32 = 31 // Agent/agentx: the AgentX session
	ASNAgentTraps uint32 = 32 // Agent/traps: hotset notifications
	ASNAgentDDS   uint32 = 33 // Agent/dds: the supplier server
	ASNAgentARM   uint32 = 34 // Agent/arm: the ARM server's rings
	// ASNAgentHotsets (Agent/hotsets): the hotsets' evaluation time.
	ASNAgentHotsets uint32 = 37
	// ASNAgentExpr (Agent/expr): each expression's last evaluation.
	ASNAgentExpr  uint32 = 38
	ASNRTimeARM   uint32 = 1 // RTime/ARM
	ASNRTimeLAN   uint32 = 2 // RTime/LAN
	ASNRTimeCalls uint32 = 3 // RTime/Calls: the ARM call graph's edges
)

// RTimeCx is the RTime context, which RTime/ARM and RTime/LAN share
// (Builder.RTime creates it).
var RTimeCx = CxDesc{Name: "RTime", Descr: "Response time measurement", ASN: ASNRTime}
