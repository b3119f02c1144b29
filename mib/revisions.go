package mib

// Revision is one entry of the module's REVISION history.
type Revision struct {
	Date  string // YYYYMMDDHHMMZ (RFC 2578 section 3.1.1 wants four-digit years)
	Descr string
}

// Revisions is the history every generated module carries, newest first;
// LAST-UPDATED is the newest. It is kept here, not taken from the clock,
// so the same tree always gives the same bytes. Add an entry when the
// generator changes what it writes (not when the tree changes).
var Revisions = []Revision{
	{Date: "202611282200Z", Descr: "Alarms may name a trap number of their own: alarmDefTrapNo " +
		"(alarmDefEntry 12, DEFVAL 0 meaning alarmRaised) and the configuration's trap_no. An alarm " +
		"instance's raise then sends alarmTrapN (subagentNotifications N) with alarmRaised's objects in " +
		"the same order; its clear stays alarmCleared. The module declares alarmTrap10 for the example " +
		"configuration, and subagent mib declares each alarmTrapN the running daemon's alarms use. A " +
		"number a hotset or another alarm sends, or one of the agent's own notifications, is refused " +
		"with inconsistentValue."},
	{Date: "202611282000Z", Descr: "Expressions, service levels and the agent's own health: derived " +
		"(base.17, a subtree per derived statistic, a table for a per-instance one), alarmTable " +
		"(base.18, a row per alarm instance: state, since, value), agentExpr (base.12.38), and " +
		"alarmRaised (base.0.32770) and alarmCleared (base.0.32771) with their objects (base.14.0.15-19); " +
		"derivedDefTable and alarmDefTable (subagentWritable 3 and 4, read-create, in the shape of " +
		"DISMAN-EXPRESSION-MIB's expExpressionTable) and sloDefTable (subagentWritable 5, the objectives, " +
		"target in parts per 100,000) with optional groups in subagentWriteCompliance; agentExpr's " +
		"alarm command counters (cmdruns, cmddropped, cmdkilled, cmdfailed); " +
		"sloTable (base.19, the service level objectives of ARM transactions: SLI, error budget, burn " +
		"rates, page and ticket), sloObjects (base.19.0) and sloBurnRaised (base.0.32772) and " +
		"sloBurnCleared (base.0.32773); rTimeCallsTable (base.13.3, the ARM call graph's edges); " +
		"Agent/requested (readings requests started) beside Agent/refreshes, agentProvDisabled (why a " +
		"provider that panicked is no longer read), Agent/snmp throttled and walkfallbacks, and " +
		"Agent/agentx walkfallbacks."},
	{Date: "202611281600Z", Descr: "Notifications a manager can trust: the notification log served " +
		"as NOTIFICATION-LOG-MIB (RFC 3014, mib-2 92, the log named \"\"), with notifLogOutcomes " +
		"(base.111) and notifLogOutcomeTable, each notification's delivery outcomes indexed like " +
		"nlmLogTable; hotsetSuppressed in hotsetTrapN and hotsetCleared (the rate limit per hotset); " +
		"hotsetDefRearm and hotsetDefCleared in hotsetDefTable; treeChanged covers every generation " +
		"since the previous one (treeFirstGeneration, treeChangeCount) and directoryChangeTable lists " +
		"the last paths that appeared or vanished."},
	{Date: "202611260100Z", Descr: "The standalone responder's usmStats counters (RFC 3414) " +
		"under agentSnmp: unsupported security levels, messages outside the time window, unknown " +
		"users and engine IDs, wrong digests, decryption errors."},
	{Date: "202611260030Z", Descr: "Alarms and a tree that describes itself: hotsetCleared " +
		"(base.0.32768) with hotsetRearm, the falling threshold; the notification log NotifLog " +
		"(base.15, as NOTIFICATION-LOG-MIB: notifLogEntryTable and notifLogEntryVarTable); the " +
		"directory Directory (base.16: directoryStatTable, a row per statistic name, and " +
		"directoryContextTable, a row per context, instances folded, with directoryGeneration); " +
		"treeChanged (base.0.32769) with treeGeneration and treeContexts."},
	{Date: "202611260000Z", Descr: "Write support: hotsetDefTable and rTimeLANHostTable under " +
		"subagentWritable (base.110), read-create columns with RowStatus and StorageType, written " +
		"with SET through an AgentX master; their groups and subagentWriteCompliance."},
	{Date: "202611252200Z", Descr: "Names chosen by rules, never numbered: a context's own " +
		"statistic beside a column of the same name says Total (pagSpTotalSize), a column whose " +
		"name the module holds says Entry (hotsetEntryName). Columns that repeat another or the " +
		"index are gone (procPidInstName, procPidDescr, fsDescr). CPU/total and any aggregate are " +
		"scalars, no row. RTime/ARM and Agent/arm declared. TruthValue, DateAndTime, index ranges, " +
		"UNITS in milliseconds, and one compliance per deployment (standalone, AgentX)."},
	{Date: "202611231900Z", Descr: "Tables: every instantiable context's instances as the rows " +
		"of a conceptual table under subagentTables, so that one module names every host's tree; " +
		"instances are declared as scalars only on request. Quantities are never Counter64 " +
		"unless they can pass 2^32 in their unit."},
	{Date: "202611230000Z", Descr: "First version: contexts, statistics, instances, scaled " +
		"textual conventions, the hotset notifications and conformance."},
}

const (
	organization = "perfagent subagent project"
	contactInfo  = "The maintainers of the perfagent subagent; see the README of its source tree."
)
