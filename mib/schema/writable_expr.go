package schema

import (
	"strconv"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/spmiwire"
)

// MaxSetExpr is the longest expression a SET may write: with the other
// columns its row fits the record the daemon keeps of a nonVolatile row.
const MaxSetExpr = 512

func defText(s string) *string { return &s }

// The expression columns both tables share.
var (
	exprIndexDescr = "The name: a letter then up to 30 letters, digits, '_' or '-'; unique across " +
		"derived statistics and alarms, which Agent/expr names both."
	exprStorageDesc = "volatile rows are lost when the daemon stops; nonVolatile rows (the default) are " +
		"kept in the daemon's state directory and restored at its next start. Rows from the " +
		"configuration file are readOnly: changed only by editing the file and reloading the " +
		"daemon. No row is permanent. A SET may write volatile or nonVolatile, when the row is created only."
	exprStatusDesc = "The row's status (RFC 2579). createAndGo makes a complete row active at once " +
		"(inconsistentValue if the expression is missing or invalid, with the place and reason in the " +
		"daemon's log); createAndWait leaves it notReady until the expression is set, then " +
		"notInService until set to active. Rows not active are not evaluated, never kept across " +
		"restarts, and dropped after snmp_set.waiting_lifetime. The columns of an active row may be " +
		"changed: the definition is replaced at once. destroy removes it."
)

func exprColumn(name, what string) WritableColumn {
	return WritableColumn{Name: name, Kind: asn1tree.OctetString, Min: 1, Max: MaxSetExpr, Range: "1..1024",
		Descr: "The expression (docs/EXPRESSIONS.md: paths, arithmetic, comparisons, sum/avg/min/max/count, " +
			"rate, raw, abs), checked as the configuration file's: a syntax error is refused with " +
			"inconsistentValue. A SET may write up to " + strconv.Itoa(MaxSetExpr) + " octets; a configured row " +
			"may hold 1024. " + what + " It has no default: a row is notReady until it is set."}
}

// DerivedDefTable holds one row per derived statistic, the shape of
// DISMAN-EXPRESSION-MIB's expExpressionTable with a name index.
var DerivedDefTable = &WritableTable{
	Name: "derivedDefTable", Entry: "derivedDefEntry", Arc: 3, Index: "derivedDefName", IndexMax: 31,
	IndexDescr: exprIndexDescr + " The statistic is served as Derived/<name>/value, or per instance.",
	Columns: []WritableColumn{
		exprColumn("derivedDefExpr", "Its value, or one per instance, is the derived statistic."),
		{Name: "derivedDefDescription", Kind: asn1tree.OctetString, Min: 0, Max: spmiwire.MaxDescr, DefaultText: defText(""),
			Descr: "The statistic's description, served in the directory and the MIB."},
		{Name: "derivedDefUnits", Kind: asn1tree.OctetString, Min: 0, Max: spmiwire.MaxDescr, DefaultText: defText(""),
			Descr: "The statistic's units."},
		{Name: "derivedDefScale", Kind: asn1tree.Integer32, Min: 0, Max: 6, Default: defInt(0),
			Descr: "The decimal places served: the SNMP value is the value times 10^scale."},
		{Name: "derivedDefSigned", Kind: asn1tree.Integer32, Min: 1, Max: 2, Enum: []string{"true", "false"}, TC: "TruthValue", Default: defInt(2),
			Descr: "true: served as an Integer32 that may be negative; false: a 64-bit gauge."},
	},
	StorageType: "derivedDefStorageType", RowStatus: "derivedDefRowStatus", Group: "derivedDefGroup",
	Descr: "The derived statistics, one row each: those of the configuration file (readOnly) and " +
		"those managers create with SET, evaluated by the same engine with the same validation at " +
		"expressions.interval and served under the Derived context. A SET is applied whole or not at " +
		"all. At most the daemon's expressions.max_snmp_derived rows (default 100) created over SNMP " +
		"exist, rows not active included; one more is refused with resourceUnavailable. A configured " +
		"derived statistic or alarm hides a row of the same name created over SNMP.",
	StorageDesc: exprStorageDesc, StatusDesc: exprStatusDesc,
}

// AlarmDefTable holds one row per alarm; alarmTable serves their states.
var AlarmDefTable = &WritableTable{
	Name: "alarmDefTable", Entry: "alarmDefEntry", Arc: 4, Index: "alarmDefName", IndexMax: 31,
	IndexDescr: exprIndexDescr + " The alarm's notifications carry it as alarmName.",
	Columns: []WritableColumn{
		exprColumn("alarmDefExpr", "The condition holds, per instance, when its value is not 0, or, with "+
			"alarmDefRising, from that value up."),
		{Name: "alarmDefFor", Kind: asn1tree.Integer32, Min: 1, Max: 10000, Default: defInt(1), Units: "evaluations",
			Descr: "The evaluations the condition must hold before the alarm fires (alarmRaised)."},
		{Name: "alarmDefKeep", Kind: asn1tree.Integer32, Min: 1, Max: 10000, Default: defInt(1), Units: "evaluations",
			Descr: "The evaluations the condition must be false before the alarm clears."},
		{Name: "alarmDefSeverity", Kind: asn1tree.Integer32, Min: 0, Max: 32767, Default: defInt(0),
			Descr: "The severity its notifications carry as alarmSeverity."},
		{Name: "alarmDefRising", Kind: asn1tree.OctetString, Min: 0, Max: 32, DefaultText: defText(""),
			Descr: "A decimal number: the alarm fires from this value up (a value's alarm); empty, the " +
				"expression is a condition."},
		{Name: "alarmDefFalling", Kind: asn1tree.OctetString, Min: 0, Max: 32, DefaultText: defText(""),
			Descr: "A decimal number at most alarmDefRising, which it needs: a firing instance clears at " +
				"this value or below; empty, at alarmDefRising."},
		{Name: "alarmDefCleared", Kind: asn1tree.Integer32, Min: 1, Max: 2, Enum: []string{"true", "false"}, TC: "TruthValue", Default: defInt(2),
			Descr: "true: the notification alarmCleared when an instance goes back to inactive."},
		{Name: "alarmDefFrequency", Kind: asn1tree.Integer32, Min: 0, Max: 604800, Default: defInt(0), Units: "seconds",
			Descr: "The least time between two notified raises of one instance: an instance that fires again " +
				"sooner sends no alarmRaised, nor alarmCleared when it clears (its states are served all the " +
				"same); 0, every raise is notified."},
	},
	Added: []WritableColumn{
		{Name: "alarmDefTrapNo", Kind: asn1tree.Integer32, Min: 0, Max: MaxTrapNo, Default: defInt(0),
			Descr: "The notification an instance's raise sends: alarmTrapN (base.0.N) with N this number, " +
				"carrying alarmRaised's objects; 0 (the default), alarmRaised. The clear is alarmCleared " +
				"either way. A number another alarm or a hotset (hotsetDefTrapNo, or the configuration " +
				"file's) sends is refused with inconsistentValue: one number is one notification."},
	},
	StorageType: "alarmDefStorageType", RowStatus: "alarmDefRowStatus", Group: "alarmDefGroup",
	Descr: "The alarms on expressions, one row each: those of the configuration file (readOnly) and " +
		"those managers create with SET, evaluated by the same engine with the same validation; " +
		"alarmTable serves their instances' states and alarmRaised and alarmCleared notify them. A SET " +
		"is applied whole or not at all. At most the daemon's expressions.max_snmp_alarms rows (default " +
		"100) created over SNMP exist, rows not active included; one more is refused with " +
		"resourceUnavailable. A configured derived statistic or alarm hides a row of the same name " +
		"created over SNMP.",
	StorageDesc: exprStorageDesc, StatusDesc: exprStatusDesc,
}
