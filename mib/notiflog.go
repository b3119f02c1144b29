package mib

import (
	"fmt"
	"strings"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/mib/schema"
	"github.com/perfagent/subagent/spmi"
)

// notifLogOutcomeTable (schema.OutcomeColumns) as the module declares it,
// beside NOTIFICATION-LOG-MIB, which it does not declare.

// The outcome table's other descriptors (schema.OutcomeTable is its own).
const (
	outcomeEntry   = "notifLogOutcomeEntry"
	outcomeLogName = "notifLogOutcomeLogName"
	outcomeIndex   = "notifLogOutcomeIndex"
	outcomeGroup   = "notifLogOutcomeGroup"
	outcomeNode    = "notifLogOutcomes"
	outcomeGrpArc  = 3 // under the hotset groups
)

func (m *model) outcomeNames() []string {
	out := []string{outcomeNode, schema.OutcomeTable, outcomeEntry, outcomeLogName, outcomeIndex, outcomeGroup}
	for _, c := range schema.OutcomeColumns {
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
	add(schema.OutcomeTable, tOID, "OBJECT-TYPE", "", "SEQUENCE OF "+seq,
		objectType(schema.OutcomeTable, "SEQUENCE OF "+seq, "", "not-accessible",
			"The delivery outcomes of each notification of NOTIFICATION-LOG-MIB's nlmLogTable, one row per "+
				"row of nlmLogTable with the same index (nlmLogName, nlmLogIndex).", outcomeNode, 1))
	items := []string{outcomeLogName + " DisplayString", outcomeIndex + " Unsigned32"}
	for _, c := range schema.OutcomeColumns {
		items = append(items, c.Name+" "+c.Syntax)
	}
	text := fmt.Sprintf("%s OBJECT-TYPE\n%sSYNTAX      %s\n%sMAX-ACCESS  not-accessible\n%sSTATUS      current\n%sDESCRIPTION\n%s\n%sINDEX       { %s, %s }\n%s::= { %s 1 }\n",
		outcomeEntry, ind, seq, ind, ind, ind, quoted(ind+ind, "One notification's outcomes."), ind, outcomeLogName, outcomeIndex, ind, schema.OutcomeTable)
	text += "\n" + seq + " ::= SEQUENCE {\n" + ind + strings.Join(items, ",\n"+ind) + "\n}\n"
	add(outcomeEntry, entry, "OBJECT-TYPE", "", seq, text)
	const nameSyn, idxSyn = "DisplayString (SIZE (0..32))", "Unsigned32 (1..4294967295)"
	add(outcomeLogName, entry.Append(1), "OBJECT-TYPE", "", nameSyn, objectType(outcomeLogName, nameSyn, "", "not-accessible",
		"The log's name, nlmLogName: the zero-length string, the agent's one log.", outcomeEntry, 1))
	add(outcomeIndex, entry.Append(2), "OBJECT-TYPE", "", idxSyn, objectType(outcomeIndex, idxSyn, "", "not-accessible",
		"The notification's nlmLogIndex.", outcomeEntry, 2))
	for i, c := range schema.OutcomeColumns {
		a := uint32(i) + 3
		add(c.Name, entry.Append(a), "OBJECT-TYPE", "", c.Syntax, objectType(c.Name, c.Syntax, "", "read-only", c.Descr, outcomeEntry, a))
	}
}

// outcomeConformance adds the table's group under the hotset groups.
func (m *model) outcomeConformance(add addFunc, hot string, base asn1tree.OID) {
	var members []string
	for _, c := range schema.OutcomeColumns {
		members = append(members, c.Name)
	}
	add(outcomeGroup, base.Append(hotsetGroupsArc, outcomeGrpArc), "OBJECT-GROUP", "", "",
		objectGroup(outcomeGroup, "OBJECTS", members, "The delivery outcomes of the notifications logged.", hot, outcomeGrpArc))
}
