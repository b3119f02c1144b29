package mib

import (
	"fmt"
	"strings"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/mib/schema"
	"github.com/perfagent/subagent/spmi"
)

// The writable tables (schema.WritableTables) as the module declares them.

// Arcs of the write support's conformance.
const (
	writeComplianceArc = 4 // under prefixCompliances
	writableGroupsArc  = 5 // under prefixConformance
)

// writableNames are the descriptors writeWritable uses.
func (m *model) writableNames() []string {
	out := []string{m.prefix + "Writable", m.prefix + "WritableGroups", m.prefix + "WriteCompliance"}
	for _, t := range schema.WritableTables() {
		out = append(out, t.Name, t.Entry, t.Index, t.StorageType, t.RowStatus, t.Group)
		for _, c := range t.AllColumns() {
			out = append(out, c.Name)
		}
	}
	return out
}

// writeWritable adds base.ASNWritable and the tables under it.
func (m *model) writeWritable(add addFunc, self string) {
	node := m.prefix + "Writable"
	add(node, m.base.Append(spmi.ASNWritable), "OBJECT-IDENTITY", "", "", identity(node,
		"The tables managers write with SET through the AgentX master, whose access control "+
			"decides who may write. The agent's own SNMP responder serves them read-only.", self, spmi.ASNWritable))
	for _, t := range schema.WritableTables() {
		tOID := m.base.Append(spmi.ASNWritable, t.Arc)
		entry := tOID.Append(1)
		seq := strings.ToUpper(t.Entry[:1]) + t.Entry[1:]
		add(t.Name, tOID, "OBJECT-TYPE", "", "SEQUENCE OF "+seq,
			objectType(t.Name, "SEQUENCE OF "+seq, "", "not-accessible", t.Descr, node, t.Arc))
		items := []string{t.Index + " DisplayString"}
		for _, c := range t.Columns {
			items = append(items, c.Name+" "+seqType(&c))
		}
		items = append(items, t.StorageType+" StorageType", t.RowStatus+" RowStatus")
		for _, c := range t.Added {
			items = append(items, c.Name+" "+seqType(&c))
		}
		text := fmt.Sprintf("%s OBJECT-TYPE\n%sSYNTAX      %s\n%sMAX-ACCESS  not-accessible\n%sSTATUS      current\n%sDESCRIPTION\n%s\n%sINDEX       { %s }\n%s::= { %s 1 }\n",
			t.Entry, ind, seq, ind, ind, ind, quoted(ind+ind, "One row of "+t.Name+"."), ind, t.Index, ind, t.Name)
		text += "\n" + seq + " ::= SEQUENCE {\n" + ind + strings.Join(items, ",\n"+ind) + "\n}\n"
		add(t.Entry, entry, "OBJECT-TYPE", "", seq, text)
		isyn := fmt.Sprintf("DisplayString (SIZE (1..%d))", t.IndexMax)
		add(t.Index, entry.Append(1), "OBJECT-TYPE", "", isyn, writableObject(t.Index, isyn, "", "not-accessible", t.IndexDescr, "", t.Entry, 1))
		for i, c := range t.AllColumns() {
			access := "read-create"
			if c.ReadOnly {
				access = "read-only"
			}
			arc := t.ColumnArc(i)
			add(c.Name, entry.Append(arc), "OBJECT-TYPE", "", c.Syntax(), writableObject(c.Name, c.Syntax(), c.Units, access, c.Descr, defvalText(&c), t.Entry, arc))
		}
		arc := t.StorageArc()
		add(t.StorageType, entry.Append(arc), "OBJECT-TYPE", "", "StorageType",
			writableObject(t.StorageType, "StorageType", "", "read-create", "How the row is kept: "+t.StorageDesc, "nonVolatile", t.Entry, arc))
		add(t.RowStatus, entry.Append(arc+1), "OBJECT-TYPE", "", "RowStatus",
			writableObject(t.RowStatus, "RowStatus", "", "read-create", t.StatusDesc, "", t.Entry, arc+1))
	}
}

// writableObject is objectType with a DEFVAL ("" for none).
func writableObject(name, syn, units, access, descr, defval, parent string, arc uint32) string {
	s := objectType(name, syn, units, access, descr, parent, arc)
	if defval == "" {
		return s
	}
	at := strings.LastIndex(s, ind+"::=")
	return s[:at] + ind + "DEFVAL      { " + defval + " }\n" + s[at:]
}

// writableConformance adds the tables' groups and the compliance of an
// agent that lets managers write them.
func (m *model) writableConformance(add addFunc, conf, comps string, base asn1tree.OID) {
	groups := m.prefix + "WritableGroups"
	add(groups, base.Append(writableGroupsArc), "OBJECT IDENTIFIER", "", "",
		fmt.Sprintf("%s OBJECT IDENTIFIER ::= { %s %d }\n", groups, conf, writableGroupsArc))
	for _, t := range schema.WritableTables() {
		var members []string
		for _, c := range t.Columns {
			members = append(members, c.Name)
		}
		members = append(members, t.StorageType, t.RowStatus)
		for _, c := range t.Added {
			members = append(members, c.Name)
		}
		add(t.Group, base.Append(writableGroupsArc, t.Arc), "OBJECT-GROUP", "", "",
			objectGroup(t.Group, "OBJECTS", members, "The columns of "+t.Name+".", groups, t.Arc))
	}
	name := m.prefix + "WriteCompliance"
	var b strings.Builder
	fmt.Fprintf(&b, "%s MODULE-COMPLIANCE\n%sSTATUS      current\n%sDESCRIPTION\n%s\n%sMODULE      -- this module\n",
		name, ind, ind, quoted(ind+ind, "An agent that lets managers create, change and destroy hotsets, "+
			"RTime/LAN hosts, derived statistics, alarms and service level objectives with SET, through an AgentX master whose access control decides who "+
			"may write. It meets "+m.prefix+"AgentXCompliance too."), ind)
	fmt.Fprintf(&b, "%sMANDATORY-GROUPS { %s }\n", ind+ind, schema.HotsetDefTable.Group)
	fmt.Fprintf(&b, "%sGROUP       %s\n%sDESCRIPTION\n%s\n", ind+ind, schema.RTimeLANHostTable.Group, ind+ind,
		quoted(ind+ind+ind, "Required of agents that measure RTime/LAN response times."))
	for _, t := range []*schema.WritableTable{schema.DerivedDefTable, schema.AlarmDefTable} {
		fmt.Fprintf(&b, "%sGROUP       %s\n%sDESCRIPTION\n%s\n", ind+ind, t.Group, ind+ind,
			quoted(ind+ind+ind, "Required of agents that evaluate expressions (the Derived and Alarm contexts)."))
	}
	fmt.Fprintf(&b, "%sGROUP       %s\n%sDESCRIPTION\n%s\n", ind+ind, schema.SLODefTable.Group, ind+ind,
		quoted(ind+ind+ind, "Required of agents that serve service level objectives of ARM transactions (the SLO context)."))
	for _, t := range schema.WritableTables() {
		fmt.Fprintf(&b, "%sOBJECT      %s\n%sWRITE-SYNTAX INTEGER { volatile(2), nonVolatile(3) }\n%sDESCRIPTION\n%s\n",
			ind+ind, t.StorageType, ind+ind, ind+ind, quoted(ind+ind+ind, "Rows created over SNMP are volatile or nonVolatile."))
	}
	fmt.Fprintf(&b, "%s::= { %s %d }\n", ind, comps, writeComplianceArc)
	add(name, base.Append(compliancesArc, writeComplianceArc), "MODULE-COMPLIANCE", "", "", b.String())
}

// seqType is the column's type in the entry's SEQUENCE.
func seqType(c *schema.WritableColumn) string {
	if strings.HasPrefix(c.Syntax(), "OCTET STRING") {
		return "OCTET STRING"
	}
	s, _, _ := strings.Cut(c.Syntax(), " ")
	return s
}

// defvalText is the column's DEFVAL ("" for none).
func defvalText(c *schema.WritableColumn) string {
	switch {
	case c.DefaultText != nil:
		return fmt.Sprintf("%q", *c.DefaultText)
	case c.Default == nil:
		return ""
	case len(c.Enum) > 0:
		return c.Enum[*c.Default-1]
	}
	return fmt.Sprint(*c.Default)
}
