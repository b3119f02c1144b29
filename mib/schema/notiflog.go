package schema

// The notification log is served as NOTIFICATION-LOG-MIB (RFC 3014, the
// IETF's module, not declared here); what RFC 3014 has no column for,
// each notification's delivery outcomes, is notifLogOutcomeTable under
// base.spmi.ASNNotifLogExt, indexed like nlmLogTable (package notiflog
// serves both).

// OutcomeColumn is a column of notifLogOutcomeTable, numbered from 3.
type OutcomeColumn struct {
	Name, Syntax, Descr string
}

// OutcomeTable is the outcome table's descriptor.
const OutcomeTable = "notifLogOutcomeTable"

// OutcomeColumns are the table's columns from 3 on (notiflog.ColOut*).
var OutcomeColumns = []OutcomeColumn{
	{"notifLogOutcomeDelivered", "Unsigned32", "The delivery paths (the AgentX master, each trap destination) that took the notification: a trap handed to the network, an inform acknowledged, the master's answer."},
	{"notifLogOutcomeFailed", "Unsigned32", "The delivery paths that failed or dropped the notification; notifLogOutcomeText says why."},
	{"notifLogOutcomePending", "Unsigned32", "The delivery paths that have not answered yet: informs waiting for their acknowledgement."},
	{"notifLogOutcomeOmitted", "Unsigned32", "The VarBinds of the notification beyond those kept in nlmLogVariableTable (at most 64 are kept)."},
	{"notifLogOutcomeText", "DisplayString", "Each delivery path's outcome, as 'path: result' separated by '; ', cut at 255 octets: the path is 'master' or the destination's version, kind and address ('v2c inform 127.0.0.1:162'), the result sent, acknowledged, pending, 'failed: <why>' or 'dropped: <why>'."},
}
