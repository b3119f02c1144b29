package mib

import (
	"fmt"
	"strings"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/spmi"
)

// The notification log is served as NOTIFICATION-LOG-MIB (RFC 3014, the
// IETF's module, not declared here); what RFC 3014 has no column for,
// each notification's delivery outcomes, is notifLogOutcomeTable under
// base.spmi.ASNNotifLogExt, indexed like nlmLogTable (package notiflog
// serves both).

// OutcomeColumn is a column of notifLogOutcomeTable, numbered from 3.
type OutcomeColumn struct {
	Name, Syntax, Descr string
}

// The outcome table's descriptors and columns.
const (
	OutcomeTable   = "notifLogOutcomeTable"
	outcomeEntry   = "notifLogOutcomeEntry"
	outcomeLogName = "notifLogOutcomeLogName"
	outcomeIndex   = "notifLogOutcomeIndex"
	outcomeGroup   = "notifLogOutcomeGroup"
	outcomeNode    = "notifLogOutcomes"
	outcomeGrpArc  = 3 // under the hotset groups
)

// OutcomeColumns are the table's columns from 3 on (notiflog.ColOut*).
var OutcomeColumns = []OutcomeColumn{
	{"notifLogOutcomeDelivered", "Unsigned32", "The delivery paths (the AgentX master, each trap destination) that took the notification: a trap handed to the network, an inform acknowledged, the master's answer."},
	{"notifLogOutcomeFailed", "Unsigned32", "The delivery paths that failed or dropped the notification; notifLogOutcomeText says why."},
	{"notifLogOutcomePending", "Unsigned32", "The delivery paths that have not answered yet: informs waiting for their acknowledgement."},
	{"notifLogOutcomeOmitted", "Unsigned32", "The VarBinds of the notification beyond those kept in nlmLogVariableTable (at most 64 are kept)."},
	{"notifLogOutcomeText", "DisplayString", "Each delivery path's outcome, as 'path: result' separated by '; ', cut at 255 octets: the path is 'master' or the destination's version, kind and address ('v2c inform 127.0.0.1:162'), the result sent, acknowledged, pending, 'failed: <why>' or 'dropped: <why>'."},
}

func (m *model) outcomeNames() []string {
	out := []string{outcomeNode, OutcomeTable, outcomeEntry, outcomeLogName, outcomeIndex, outcomeGroup}
	for _, c := range OutcomeColumns {
		out = append(out, c.Name)
	}
	return out
}

// writeOutcomes adds base.ASNNotifLogExt and notifLogOutcomeTable.
func (m *model) writeOutcomes(add addFunc, self string) {
	arc := spmi.ASNNotifLogExt
	add(outcomeNode, m.base.Append(arc), "OBJECT-IDENTITY", "", "", identity(outcomeNode,
		"The notification log beside NOTIFICATION-LOG-MIB (RFC 3014), which the agent serves at mib-2 92 "+
			"for the log named \"\" (the zero-length string): what that module has no object for.", self, arc))
	tOID := m.base.Append(arc, 1)
	entry := tOID.Append(1)
	seq := strings.ToUpper(outcomeEntry[:1]) + outcomeEntry[1:]
	add(OutcomeTable, tOID, "OBJECT-TYPE", "", "SEQUENCE OF "+seq,
		objectType(OutcomeTable, "SEQUENCE OF "+seq, "", "not-accessible",
			"The delivery outcomes of each notification of NOTIFICATION-LOG-MIB's nlmLogTable, one row per "+
				"row of nlmLogTable with the same index (nlmLogName, nlmLogIndex).", outcomeNode, 1))
	items := []string{outcomeLogName + " DisplayString", outcomeIndex + " Unsigned32"}
	for _, c := range OutcomeColumns {
		items = append(items, c.Name+" "+c.Syntax)
	}
	text := fmt.Sprintf("%s OBJECT-TYPE\n%sSYNTAX      %s\n%sMAX-ACCESS  not-accessible\n%sSTATUS      current\n%sDESCRIPTION\n%s\n%sINDEX       { %s, %s }\n%s::= { %s 1 }\n",
		outcomeEntry, ind, seq, ind, ind, ind, quoted(ind+ind, "One notification's outcomes."), ind, outcomeLogName, outcomeIndex, ind, OutcomeTable)
	text += "\n" + seq + " ::= SEQUENCE {\n" + ind + strings.Join(items, ",\n"+ind) + "\n}\n"
	add(outcomeEntry, entry, "OBJECT-TYPE", "", seq, text)
	const nameSyn, idxSyn = "DisplayString (SIZE (0..32))", "Unsigned32 (1..4294967295)"
	add(outcomeLogName, entry.Append(1), "OBJECT-TYPE", "", nameSyn, objectType(outcomeLogName, nameSyn, "", "not-accessible",
		"The log's name, nlmLogName: the zero-length string, the agent's one log.", outcomeEntry, 1))
	add(outcomeIndex, entry.Append(2), "OBJECT-TYPE", "", idxSyn, objectType(outcomeIndex, idxSyn, "", "not-accessible",
		"The notification's nlmLogIndex.", outcomeEntry, 2))
	for i, c := range OutcomeColumns {
		a := uint32(i) + 3
		add(c.Name, entry.Append(a), "OBJECT-TYPE", "", c.Syntax, objectType(c.Name, c.Syntax, "", "read-only", c.Descr, outcomeEntry, a))
	}
}

// outcomeConformance adds the table's group under the hotset groups.
func (m *model) outcomeConformance(add addFunc, hot string, base asn1tree.OID) {
	var members []string
	for _, c := range OutcomeColumns {
		members = append(members, c.Name)
	}
	add(outcomeGroup, base.Append(hotsetGroupsArc, outcomeGrpArc), "OBJECT-GROUP", "", "",
		objectGroup(outcomeGroup, "OBJECTS", members, "The delivery outcomes of the notifications logged.", hot, outcomeGrpArc))
}
