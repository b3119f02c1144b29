package notiflog

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

// The log as NOTIFICATION-LOG-MIB (RFC 3014, mib-2 92) serves it: one log,
// the default one named "" (the zero-length nlmLogName), so every row of
// nlmLogTable is indexed 0.<nlmLogIndex> and every VarBind of
// nlmLogVariableTable 0.<nlmLogIndex>.<nlmLogVariableIndex>. The limits
// come from the configuration file: the module's read-write objects are
// served read-only.
var (
	NLM         = asn1tree.OID{1, 3, 6, 1, 2, 1, 92} // notificationLogMIB
	nlmConfig   = NLM.Append(1, 1)
	nlmStats    = NLM.Append(1, 2)
	NLMLogTable = NLM.Append(1, 3, 1)    // nlmLogTable
	NLMVarTable = NLM.Append(1, 3, 2)    // nlmLogVariableTable
	zeroDotZero = asn1tree.OID{0, 0}     // nlmLogEngineTDomain: no transport (sent, not received)
	nlmLogEntry = NLMLogTable.Append(1)  // nlmLogEntry
	nlmVarEntry = NLMVarTable.Append(1)  // nlmLogVariableEntry
	nlmCfgEntry = nlmConfig.Append(3, 1) // nlmConfigLogEntry
	nlmStatsLog = nlmStats.Append(3, 1)  // nlmStatsLogEntry
	defaultLog  = asn1tree.OID{0}        // the index of nlmLogName "": its length, no octets
	nlmScalars  = []asn1tree.OID{        // the instances snmpd serves itself (see Registrations)
		nlmConfig.Append(1, 0), nlmConfig.Append(2, 0), nlmStats.Append(1, 0), nlmStats.Append(2, 0),
	}
)

// Columns of nlmLogEntry (nlmLogIndex, 1, is not-accessible).
const (
	colLogTime           = 2 // TimeStamp
	colLogDateAndTime    = 3 // DateAndTime
	colLogEngineID       = 4 // SnmpEngineID
	colLogEngineTAddress = 5 // TAddress
	colLogEngineTDomain  = 6 // TDomain
	colLogContextEngine  = 7 // SnmpEngineID
	colLogContextName    = 8 // SnmpAdminString
	colLogNotificationID = 9 // OBJECT IDENTIFIER
)

// Columns of nlmLogVariableEntry (nlmLogVariableIndex, 1, is
// not-accessible): the VarBind's OID, its type and the one value column
// of that type.
const (
	colVarID   = 2
	colVarType = 3
)

// nlmLogVariableValueType's values and their value columns. IpAddress (5,
// column 9) and Opaque (9, column 12) are never logged: the daemon sends
// neither.
var varTypes = map[asn1tree.Kind]struct{ typ, col uint32 }{
	asn1tree.Counter32:        {1, 4},
	asn1tree.Gauge32:          {2, 5}, // Unsigned32
	asn1tree.TimeTicks:        {3, 6},
	asn1tree.Integer32:        {4, 7},
	asn1tree.OctetString:      {6, 8},
	asn1tree.ObjectIdentifier: {7, 10},
	asn1tree.Counter64:        {8, 11},
}

// Columns of the outcome extension table (SUBAGENT-MIB
// notifLogOutcomeTable), indexed like nlmLogTable; 1 and 2 are its
// not-accessible index objects.
const (
	ColOutDelivered = 3 // Unsigned32: delivery paths that took it
	ColOutFailed    = 4 // Unsigned32: paths that failed or dropped it
	ColOutPending   = 5 // Unsigned32: paths not answered yet (informs)
	ColOutOmitted   = 6 // Unsigned32: VarBinds beyond those kept
	ColOutOutcome   = 7 // DisplayString: "path: result; ..."
)

// BuildMIB is the tree of v as NOTIFICATION-LOG-MIB, with the outcome
// table at ext.1 (its entry ext.1.1) when ext is not empty. It reads v only.
func BuildMIB(v *View, ext asn1tree.OID) *asn1tree.Tree[asn1tree.Value] {
	gauge := func(n uint64) asn1tree.Value { return asn1tree.Gauge(uint32(min(n, 1<<32-1))) }
	c32 := func(n uint64) asn1tree.Value { return asn1tree.Value{Kind: asn1tree.Counter32, Num: uint64(uint32(n))} }
	minutes := uint64(v.Age / time.Minute)
	es := make([]asn1tree.Entry[asn1tree.Value], 0, 16+len(v.Entries)*(8+6+4*MaxVars/8))
	add := func(o asn1tree.OID, val asn1tree.Value) {
		es = append(es, asn1tree.Entry[asn1tree.Value]{OID: o, Val: val})
	}
	add(nlmScalars[0], gauge(uint64(v.Max)))                   // nlmConfigGlobalEntryLimit
	add(nlmScalars[1], gauge(minutes))                         // nlmConfigGlobalAgeOut
	add(nlmScalars[2], c32(v.Stats.Logged))                    // nlmStatsGlobalNotificationsLogged
	add(nlmScalars[3], c32(v.Stats.Evicted))                   // nlmStatsGlobalNotificationsBumped (age-outs are not bumps)
	add(cat(nlmCfgEntry, 2, defaultLog), asn1tree.Str(""))     // nlmConfigLogFilterName: no filter
	add(cat(nlmCfgEntry, 3, defaultLog), gauge(uint64(v.Max))) // nlmConfigLogEntryLimit
	add(cat(nlmCfgEntry, 4, defaultLog), asn1tree.Int(1))      // nlmConfigLogAdminStatus enabled
	add(cat(nlmCfgEntry, 5, defaultLog), asn1tree.Int(2))      // nlmConfigLogOperStatus operational
	add(cat(nlmCfgEntry, 6, defaultLog), asn1tree.Int(5))      // nlmConfigLogStorageType readOnly (from the file)
	add(cat(nlmCfgEntry, 7, defaultLog), asn1tree.Int(1))      // nlmConfigLogEntryStatus active
	add(cat(nlmStatsLog, 1, defaultLog), c32(v.Stats.Logged))  // nlmStatsLogNotificationsLogged
	add(cat(nlmStatsLog, 2, defaultLog), c32(v.Stats.Evicted)) // nlmStatsLogNotificationsBumped
	var outEntry asn1tree.OID
	if len(ext) > 0 {
		outEntry = ext.Append(1, 1)
	}
	for i := range v.Entries {
		e := &v.Entries[i]
		row := asn1tree.OID{0, e.Index}
		up := uint64(e.Uptime / (10 * time.Millisecond))
		if e.Restored {
			up = 0 // of a previous run: RFC 3014 asks for 0
		}
		add(cat(nlmLogEntry, colLogTime, row), asn1tree.Value{Kind: asn1tree.TimeTicks, Num: uint64(uint32(up))})
		add(cat(nlmLogEntry, colLogDateAndTime, row), asn1tree.Str(DateAndTime(e.Time)))
		add(cat(nlmLogEntry, colLogEngineID, row), asn1tree.Str("")) // one engine: RFC 3014 allows ""
		add(cat(nlmLogEntry, colLogEngineTAddress, row), asn1tree.Str(""))
		add(cat(nlmLogEntry, colLogEngineTDomain, row), asn1tree.Value{Kind: asn1tree.ObjectIdentifier, OID: zeroDotZero})
		add(cat(nlmLogEntry, colLogContextEngine, row), asn1tree.Str(""))
		add(cat(nlmLogEntry, colLogContextName, row), asn1tree.Str(""))
		add(cat(nlmLogEntry, colLogNotificationID, row), asn1tree.Value{Kind: asn1tree.ObjectIdentifier, OID: e.OID})
		for j := range e.Vars {
			vb := &e.Vars[j]
			t, ok := varTypes[vb.Kind]
			if !ok {
				continue
			}
			vrow := asn1tree.OID{0, e.Index, uint32(j + 1)}
			add(cat(nlmVarEntry, colVarID, vrow), asn1tree.Value{Kind: asn1tree.ObjectIdentifier, OID: vb.OID})
			add(cat(nlmVarEntry, colVarType, vrow), asn1tree.Int(int32(t.typ)))
			add(cat(nlmVarEntry, t.col, vrow), vb.Value())
		}
		if outEntry != nil {
			ok, failed, pending := countOutcomes(e)
			add(cat(outEntry, ColOutDelivered, row), asn1tree.Gauge(ok))
			add(cat(outEntry, ColOutFailed, row), asn1tree.Gauge(failed))
			add(cat(outEntry, ColOutPending, row), asn1tree.Gauge(pending))
			add(cat(outEntry, ColOutOmitted, row), asn1tree.Gauge(uint32(e.Omitted)))
			add(cat(outEntry, ColOutOutcome, row), asn1tree.Str(Outcomes(e)))
		}
	}
	t, err := asn1tree.Build(es)
	if err != nil {
		panic("notiflog: " + err.Error()) // indexes are unique in a log: a bug
	}
	return t
}

// cat is prefix.col.index, in a new slice.
func cat(prefix asn1tree.OID, col uint32, index asn1tree.OID) asn1tree.OID {
	o := make(asn1tree.OID, 0, len(prefix)+1+len(index))
	return append(append(append(o, prefix...), col), index...)
}

// countOutcomes counts an entry's delivery paths by their outcome.
func countOutcomes(e *Entry) (ok, failed, pending uint32) {
	for _, o := range e.Outcomes {
		switch {
		case o.OK:
			ok++
		case o.Result == Pending:
			pending++
		default:
			failed++
		}
	}
	return ok, failed, pending
}

// DateAndTime is t as SNMPv2-TC DateAndTime, 11 octets in UTC.
func DateAndTime(t time.Time) string {
	t = t.UTC()
	y := t.Year()
	return string([]byte{byte(y >> 8), byte(y), byte(t.Month()), byte(t.Day()), byte(t.Hour()), byte(t.Minute()),
		byte(t.Second()), byte(t.Nanosecond() / 100_000_000), '+', 0, 0})
}

// MIB serves a log as NOTIFICATION-LOG-MIB. Its tree is rebuilt when the
// log's Version has changed since the last one, by the first reader
// after the change; other reads share the last tree. The zero value with
// L set is ready; Ext is where the outcome table goes (empty: none).
type MIB struct {
	L   *Log
	Ext asn1tree.OID

	mu  sync.Mutex // one rebuild at a time
	cur atomic.Pointer[built]
}

type built struct {
	version uint64
	tree    *asn1tree.Tree[asn1tree.Value]
}

// View is the log as of now: a tree a request (or a walk) keeps.
func (m *MIB) View() asn1tree.View { return m.Tree() }

// Tree is View's tree.
func (m *MIB) Tree() *asn1tree.Tree[asn1tree.Value] {
	v := m.L.Version()
	if b := m.cur.Load(); b != nil && b.version == v {
		return b.tree
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if b := m.cur.Load(); b != nil && b.version == m.L.Version() {
		return b.tree
	}
	lv := m.L.View()
	b := &built{version: lv.Version, tree: BuildMIB(&lv, m.Ext)}
	m.cur.Store(b)
	return b.tree
}

// Registrations are the AgentX registrations that give the daemon the
// whole module under snmpd: mib-2 92 itself (nlmConfigLogTable and
// nlmStatsLogTable, which snmpd 5.9 leaves to others) and, at a priority
// above snmpd's own (127), the instances and tables snmpd 5.9 registers
// for its own, always empty, log: a registration more specific than ours
// wins whatever its priority (RFC 2741 7.1.5.1), an identical one by
// priority.
func Registrations(priority uint8) (subtree asn1tree.OID, exact []asn1tree.OID, exactPriority uint8) {
	exact = append(append([]asn1tree.OID(nil), nlmScalars...), NLMLogTable, NLMVarTable)
	return NLM, exact, min(priority, 100)
}
