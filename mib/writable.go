package mib

import (
	"fmt"
	"strings"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/spmi"
)

// The tables managers write over SNMP through the AgentX master
// (daemon/snmpwrite.go, package settable), under base.spmi.ASNWritable.
// They are declared here, with the ranges and defaults the daemon
// enforces, so that the module and the agent cannot drift apart: the
// daemon builds its columns from these definitions.

// WritableTable is one writable table: entry.1 is the index (a name,
// not IMPLIED), then Columns from 2, then StorageType, then RowStatus,
// then Added: a column keeps its number, so later ones follow RowStatus.
type WritableTable struct {
	Name, Entry string
	Arc         uint32 // base.ASNWritable.Arc
	Index       string // the index object, a DisplayString
	IndexMax    int    // longest index, in octets
	IndexDescr  string
	Columns     []WritableColumn
	Added       []WritableColumn // after RowStatus
	StorageType string           // descriptor of the StorageType column
	RowStatus   string           // descriptor of the RowStatus column
	Descr       string           // the table's DESCRIPTION
	StorageDesc string           // what the StorageType column says of these rows
	StatusDesc  string           // what the RowStatus column says of these rows
	Group       string           // its OBJECT-GROUP (under prefixWritableGroups, numbered Arc)
}

// AllColumns are Columns then Added, the order of the daemon's rows.
func (t *WritableTable) AllColumns() []WritableColumn {
	return append(t.Columns[:len(t.Columns):len(t.Columns)], t.Added...)
}

// ColumnArc is the column number of AllColumns()[i].
func (t *WritableTable) ColumnArc(i int) uint32 {
	if i < len(t.Columns) {
		return uint32(i) + 2
	}
	return uint32(i) + 4 // after StorageType and RowStatus
}

// StorageArc, StatusArc and LastArc are the numbers of the StorageType
// and RowStatus columns and of the last column.
func (t *WritableTable) StorageArc() uint32 { return uint32(len(t.Columns)) + 2 }
func (t *WritableTable) StatusArc() uint32  { return uint32(len(t.Columns)) + 3 }
func (t *WritableTable) LastArc() uint32    { return t.StatusArc() + uint32(len(t.Added)) }

// WritableColumn is a column besides the index, StorageType and RowStatus.
type WritableColumn struct {
	Name string
	Kind asn1tree.Kind // the wire type: Integer32, OctetString, Gauge32
	// Min and Max bound what a SET may write: an integer's range or a
	// string's length. Range is the SYNTAX's range (or size) when it is wider
	// (configured rows may hold values a SET may not write).
	Min, Max int64
	Range    string
	Enum     []string // named values 1..n of an enumerated INTEGER
	TC       string   // a textual convention for the SYNTAX (TruthValue, with Enum true, false)
	Default  *int64   // DEFVAL: what a new row holds until set
	// DefaultText is a string column's DEFVAL.
	DefaultText *string
	ReadOnly    bool // read-only: the agent sets it
	Units       string
	Descr       string
}

// Syntax is the column's SYNTAX as written.
func (c *WritableColumn) Syntax() string {
	switch {
	case c.TC != "":
		return c.TC
	case len(c.Enum) > 0:
		v := make([]string, len(c.Enum))
		for i, e := range c.Enum {
			v[i] = fmt.Sprintf("%s(%d)", e, i+1)
		}
		return "INTEGER { " + strings.Join(v, ", ") + " }"
	case c.Kind == asn1tree.OctetString && c.Range != "":
		return "OCTET STRING (SIZE (" + c.Range + "))" // longer than a DisplayString's 255
	case c.Kind == asn1tree.OctetString:
		return fmt.Sprintf("DisplayString (SIZE (%d..%d))", c.Min, c.Max)
	case c.Kind == asn1tree.Gauge32:
		return "Unsigned32"
	case c.Range != "":
		return "Integer32 (" + c.Range + ")"
	}
	return fmt.Sprintf("Integer32 (%d..%d)", c.Min, c.Max)
}

// seqType is the column's type in the entry's SEQUENCE.
func (c *WritableColumn) seqType() string {
	if strings.HasPrefix(c.Syntax(), "OCTET STRING") {
		return "OCTET STRING"
	}
	s, _, _ := strings.Cut(c.Syntax(), " ")
	return s
}

func (c *WritableColumn) defval() string {
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

func defInt(v int64) *int64 { return &v }

// HotsetDefTable holds one row per hotset (docs/HOTSETS.md): the
// configured ones, readOnly, and those managers create.
var HotsetDefTable = &WritableTable{
	Name: "hotsetDefTable", Entry: "hotsetDefEntry", Arc: 1, Index: "hotsetDefName", IndexMax: 31,
	IndexDescr: "The hotset's name: 1 to 31 letters, digits, '_' or '-', starting with a letter. " +
		"Its hotset is served under Hotset/<name>/ with its feed and exception tables, and the " +
		"notifications it sends carry it as hotsetName.",
	Columns: []WritableColumn{
		{Name: "hotsetDefStat", Kind: asn1tree.OctetString, Min: 5, Max: 255,
			Descr: "The statistic the hotset watches across all peer instances, as a path with '*' for " +
				"the peers: <grandparent>/*/<statistic>, such as Disk/*/busy or FS/rootvg/*/%used. A row " +
				"cannot become active with a path that matches no statistic on this host: the SET gets " +
				"inconsistentValue and the daemon logs the nearest existing path. It has no default: a " +
				"row is notReady until it is set."},
		{Name: "hotsetDefMaxResp", Kind: asn1tree.Integer32, Min: 0, Max: 32767, Default: defInt(0),
			Descr: "The most peers one exception or notification reports, hottest first. Must be " +
				"non-zero when hotsetDefExcpType is not none."},
		{Name: "hotsetDefThreshold", Kind: asn1tree.Integer32, Min: -2147483647, Max: 2147483647, Default: defInt(0),
			Descr: "The threshold: a rate per second for a counter, a level in the statistic's units " +
				"for a quantity. A positive threshold is crossed by values above it, a negative one by " +
				"values below its absolute value. Must be non-zero when hotsetDefExcpType is not none."},
		{Name: "hotsetDefFrequency", Kind: asn1tree.Integer32, Min: 300, Max: 604800, Range: "0..2147483647",
			Default: defInt(300), Units: "seconds",
			Descr: "The shortest time between two exceptions or notifications of one peer set. A SET " +
				"may write 300 (the guide's minimum) to 604800 (one week); a configured hotset that " +
				"raises no exception shows its setting, 0 when it has none."},
		{Name: "hotsetDefFeedType", Kind: asn1tree.Integer32, Min: 1, Max: 3, Enum: []string{"none", "threshold", "always"}, Default: defInt(2),
			Descr: "Which peers the hotset's feed table (Hotset/<name>/feed) lists: none; threshold, " +
				"those beyond the threshold; always, all of them, hottest first. feed none with " +
				"hotsetDefExcpType none is refused (inconsistentValue): the hotset would report nothing."},
		{Name: "hotsetDefExcpType", Kind: asn1tree.Integer32, Min: 1, Max: 4, Enum: []string{"none", "exception", "trap", "both"}, Default: defInt(1),
			Descr: "What a crossing raises: none; exception, a row of the exception table " +
				"(Hotset/<name>/excp) and a log record; trap, a notification hotsetTrapN with N " +
				"hotsetDefTrapNo; both. Other than none it needs hotsetDefMaxResp and " +
				"hotsetDefThreshold non-zero, exception and both a positive hotsetDefSeverity, trap and " +
				"both a positive hotsetDefTrapNo."},
		{Name: "hotsetDefSeverity", Kind: asn1tree.Integer32, Min: 0, Max: 32767, Default: defInt(0),
			Descr: "The severity of the hotset's exceptions, carried as hotsetSeverity; 0 when it " +
				"raises notifications only."},
		{Name: "hotsetDefTrapNo", Kind: asn1tree.Integer32, Min: 0, Max: 32767, Default: defInt(0),
			Descr: "The notification the hotset sends: hotsetTrapN (base.0.N) with N this number; 0 " +
				"when it sends none."},
	},
	Added: []WritableColumn{
		{Name: "hotsetDefRearm", Kind: asn1tree.Integer32, Min: -2147483647, Max: 2147483647, Default: defInt(0),
			Descr: "The falling threshold (RMON's alarmFallingThreshold), in the units and with the " +
				"sign of hotsetDefThreshold: from 1 to the threshold for a positive one, at most the " +
				"threshold for a negative one; 0, none. With it, a peer that raised an event raises " +
				"the next only after its value went back past it and crossed the threshold again. " +
				"Other than 0 it needs hotsetDefExcpType other than none; a value the configuration " +
				"file's rearm may not hold is refused (inconsistentValue)."},
		{Name: "hotsetDefCleared", Kind: asn1tree.Integer32, Min: 1, Max: 2, Enum: []string{"true", "false"}, TC: "TruthValue", Default: defInt(2),
			Descr: "true: a cleared event when a peer that raised one goes back past hotsetDefRearm, " +
				"which it needs (inconsistentValue without): a log record and, when hotsetDefExcpType " +
				"is trap or both, the notification hotsetCleared."},
	},
	StorageType: "hotsetDefStorageType", RowStatus: "hotsetDefRowStatus", Group: "hotsetDefGroup",
	Descr: "The hotsets, one row each: those of the configuration file (StorageType readOnly: " +
		"changed only by editing the file and reloading the daemon) and those managers create " +
		"with SET. A row made active is a hotset like a configured one, evaluated by the same " +
		"engine with the same validation, feeds, exceptions and notifications, and served under " +
		"the Hotset context. A SET is applied whole or not at all. At most the daemon's " +
		"hotset.max_snmp_rows rows (default 100) created over SNMP exist, rows not active " +
		"included; one more is refused with resourceUnavailable. A configured hotset hides a row " +
		"of the same name created over SNMP.",
	StorageDesc: "volatile rows are lost when the daemon stops; nonVolatile rows (the default) are " +
		"kept in the daemon's state directory and restored at its next start. Rows from the " +
		"configuration file are readOnly: they cannot be changed or destroyed over SNMP. No row is " +
		"permanent. A SET may write volatile or nonVolatile, when the row is created only.",
	StatusDesc: "The row's status (RFC 2579). createAndGo makes a complete row active at once " +
		"(inconsistentValue if hotsetDefStat is missing or the hotset is invalid); createAndWait " +
		"leaves it notReady until hotsetDefStat is set, then notInService until set to active. " +
		"Rows not active are not evaluated, never kept across restarts, and dropped after 5 " +
		"minutes. The columns of an active row may be changed: the hotset is replaced at once. " +
		"destroy removes the row and its hotset, which then sends no more notifications.",
}

// RTimeLANHostTable holds one row per host RTime/LAN measures.
var RTimeLANHostTable = &WritableTable{
	Name: "rTimeLANHostTable", Entry: "rTimeLANHostEntry", Arc: 2, Index: "rTimeLANHostName", IndexMax: 64,
	IndexDescr: "The host: an IPv4 or IPv6 address, or a name the daemon resolves (letters, digits, " +
		"'-', '_' and dots).",
	Columns: []WritableColumn{
		{Name: "rTimeLANHostNumber", Kind: asn1tree.Gauge32, ReadOnly: true,
			Descr: "The host's number under RTime/LAN (its row of rTimeLANTable), chosen when the row " +
				"is created and kept across restarts for a row that is kept."},
	},
	StorageType: "rTimeLANHostStorageType", RowStatus: "rTimeLANHostRowStatus", Group: "rTimeLANHostGroup",
	Descr: "The hosts RTime/LAN measures (ICMP echo response time), one row each: those of the " +
		"configuration file (readOnly), and those created with 'subagent create' on the host or " +
		"with SET here, which both see. A row made active is measured from the next interval on. " +
		"The daemon's rtime_lan.max_hosts bounds the hosts; one more is refused with " +
		"resourceUnavailable.",
	StorageDesc: "volatile rows are lost when the daemon stops; nonVolatile rows (the default, and " +
		"those of 'subagent create') are kept in the daemon's state directory with their number. " +
		"Hosts of the configuration file are readOnly. No row is permanent. A SET may write " +
		"volatile or nonVolatile, when the row is created only.",
	StatusDesc: "The row's status (RFC 2579): createAndGo makes the row active at once; " +
		"createAndWait leaves it notInService until set to active (rows not active are dropped " +
		"after 5 minutes). destroy stops measuring the host and removes its row of rTimeLANTable.",
}

// WritableTables are the writable tables, by Arc.
func WritableTables() []*WritableTable {
	return []*WritableTable{HotsetDefTable, RTimeLANHostTable, DerivedDefTable, AlarmDefTable}
}

// Arcs of the write support's conformance.
const (
	writeComplianceArc = 4 // under prefixCompliances
	writableGroupsArc  = 5 // under prefixConformance
)

// writableNames are the descriptors writeWritable uses.
func (m *model) writableNames() []string {
	out := []string{m.prefix + "Writable", m.prefix + "WritableGroups", m.prefix + "WriteCompliance"}
	for _, t := range WritableTables() {
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
	for _, t := range WritableTables() {
		tOID := m.base.Append(spmi.ASNWritable, t.Arc)
		entry := tOID.Append(1)
		seq := strings.ToUpper(t.Entry[:1]) + t.Entry[1:]
		add(t.Name, tOID, "OBJECT-TYPE", "", "SEQUENCE OF "+seq,
			objectType(t.Name, "SEQUENCE OF "+seq, "", "not-accessible", t.Descr, node, t.Arc))
		items := []string{t.Index + " DisplayString"}
		for _, c := range t.Columns {
			items = append(items, c.Name+" "+c.seqType())
		}
		items = append(items, t.StorageType+" StorageType", t.RowStatus+" RowStatus")
		for _, c := range t.Added {
			items = append(items, c.Name+" "+c.seqType())
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
			add(c.Name, entry.Append(arc), "OBJECT-TYPE", "", c.Syntax(), writableObject(c.Name, c.Syntax(), c.Units, access, c.Descr, c.defval(), t.Entry, arc))
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
	for _, t := range WritableTables() {
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
			"RTime/LAN hosts, derived statistics and alarms with SET, through an AgentX master whose access control decides who "+
			"may write. It meets "+m.prefix+"AgentXCompliance too."), ind)
	fmt.Fprintf(&b, "%sMANDATORY-GROUPS { %s }\n", ind+ind, HotsetDefTable.Group)
	fmt.Fprintf(&b, "%sGROUP       %s\n%sDESCRIPTION\n%s\n", ind+ind, RTimeLANHostTable.Group, ind+ind,
		quoted(ind+ind+ind, "Required of agents that measure RTime/LAN response times."))
	for _, t := range []*WritableTable{DerivedDefTable, AlarmDefTable} {
		fmt.Fprintf(&b, "%sGROUP       %s\n%sDESCRIPTION\n%s\n", ind+ind, t.Group, ind+ind,
			quoted(ind+ind+ind, "Required of agents that evaluate expressions (the Derived and Alarm contexts)."))
	}
	for _, t := range WritableTables() {
		fmt.Fprintf(&b, "%sOBJECT      %s\n%sWRITE-SYNTAX INTEGER { volatile(2), nonVolatile(3) }\n%sDESCRIPTION\n%s\n",
			ind+ind, t.StorageType, ind+ind, ind+ind, quoted(ind+ind+ind, "Rows created over SNMP are volatile or nonVolatile."))
	}
	fmt.Fprintf(&b, "%s::= { %s %d }\n", ind, comps, writeComplianceArc)
	add(name, base.Append(compliancesArc, writeComplianceArc), "MODULE-COMPLIANCE", "", "", b.String())
}
