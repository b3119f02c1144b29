package schema

import "github.com/perfagent/subagent/asn1tree"

// SLODefTable holds one row per service level objective of ARM
// transactions; the SLO context serves their counts and burn rates.
var SLODefTable = &WritableTable{
	Name: "sloDefTable", Entry: "sloDefEntry", Arc: 5, Index: "sloDefName", IndexMax: 31,
	IndexDescr: "The objective's name: 1 to 31 bytes without blanks, '/', '\\' or pattern characters. " +
		"It is served as SLO/<name>.",
	Columns: []WritableColumn{
		{Name: "sloDefApplication", Kind: asn1tree.OctetString, Min: 1, Max: 255,
			Descr: "The pattern of the application keys measured (* ? [...] as in shell patterns). " +
				"It has no default: a row is notReady until it is set."},
		{Name: "sloDefTransaction", Kind: asn1tree.OctetString, Min: 1, Max: 255,
			Descr: "The pattern of the transaction keys measured. It has no default: a row is notReady until it is set."},
		{Name: "sloDefThreshold", Kind: asn1tree.Integer32, Min: 0, Max: 3600000, Default: defInt(0), Units: "milliseconds",
			Descr: "A latency objective's threshold: a completion is good when its status is good and its " +
				"response time is within it. 0: an availability objective (good = status good). A " +
				"configured threshold below a millisecond is served rounded up to 1."},
		{Name: "sloDefTarget", Kind: asn1tree.Integer32, Min: 50000, Max: 99999, Units: "parts per 100000",
			Descr: "The target ratio of good completions in parts per 100,000: 99900 is 99.9 %, 99999 " +
				"is 99.999 %, the finest the configuration file allows. It has no default: a row is " +
				"notReady until it is set."},
		{Name: "sloDefWindow", Kind: asn1tree.Integer32, Min: 3600, Max: 7776000, Default: defInt(2592000), Units: "seconds",
			Descr: "The objective's window: 1 hour to 90 days, whole minutes up to 72 hours and whole " +
				"hours beyond (the buckets of the counts); otherwise inconsistentValue."},
	},
	StorageType: "sloDefStorageType", RowStatus: "sloDefRowStatus", Group: "sloDefGroup",
	Descr: "The service level objectives of ARM transactions, one row each: those of the " +
		"configuration file (readOnly) and those managers create with SET, checked as the " +
		"configuration file's are and served under the SLO context from their creation. A SET is " +
		"applied whole or not at all. At most the daemon's slo.max_snmp_objectives rows (default 100) " +
		"created over SNMP or the control socket exist, rows not active included; one more is refused " +
		"with resourceUnavailable. A configured objective hides a row of the same name created over SNMP. " +
		"Changing an active row's patterns, threshold or window starts its counts afresh.",
	StorageDesc: "volatile rows are lost when the daemon stops; nonVolatile rows (the default) are " +
		"kept in the daemon's state directory and restored at its next start. Rows from the " +
		"configuration file are readOnly: changed only by editing the file and reloading the " +
		"daemon. No row is permanent. A SET may write volatile or nonVolatile, when the row is created only.",
	StatusDesc: "The row's status (RFC 2579). createAndGo makes a complete row active at once " +
		"(inconsistentValue if a column is missing or invalid, with the reason in the daemon's log); " +
		"createAndWait leaves it notReady until the patterns and target are set, then notInService " +
		"until set to active. Rows not active are not measured, never kept across restarts, and " +
		"dropped after snmp_set.waiting_lifetime. destroy removes it and its counts.",
}
