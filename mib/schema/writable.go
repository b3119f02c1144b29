package schema

import (
	"fmt"
	"strings"

	"github.com/perfagent/subagent/asn1tree"
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
	return []*WritableTable{HotsetDefTable, RTimeLANHostTable, DerivedDefTable, AlarmDefTable, SLODefTable}
}
