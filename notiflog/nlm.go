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
var varTypes = [...]struct{ typ, col uint32 }{
	asn1tree.Counter32:        {1, 4},
	asn1tree.Gauge32:          {2, 5}, // Unsigned32
	asn1tree.TimeTicks:        {3, 6},
	asn1tree.Integer32:        {4, 7},
	asn1tree.OctetString:      {6, 8},
	asn1tree.ObjectIdentifier: {7, 10},
	asn1tree.Counter64:        {8, 11},
}

// varType is the type and value column of a VarBind of kind k; ok is
// false for a kind not logged (NoValue).
func varType(k asn1tree.Kind) (typ, col uint32, ok bool) {
	if int(k) >= len(varTypes) || varTypes[k].typ == 0 {
		return 0, 0, false
	}
	return varTypes[k].typ, varTypes[k].col, true
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

// fixedObjects are the objects of the module that are not in a table of
// the log's entries: nlmConfig and nlmStats with their rows of the log "".
func fixedObjects(v *View) *asn1tree.Tree[asn1tree.Value] {
	gauge := func(n uint64) asn1tree.Value { return asn1tree.Gauge(uint32(min(n, 1<<32-1))) }
	c32 := func(n uint64) asn1tree.Value { return asn1tree.Value{Kind: asn1tree.Counter32, Num: uint64(uint32(n))} }
	es := []asn1tree.Entry[asn1tree.Value]{
		{OID: nlmScalars[0], Val: gauge(uint64(v.Max))},                   // nlmConfigGlobalEntryLimit
		{OID: nlmScalars[1], Val: gauge(uint64(v.Age / time.Minute))},     // nlmConfigGlobalAgeOut
		{OID: nlmScalars[2], Val: c32(v.Stats.Logged)},                    // nlmStatsGlobalNotificationsLogged
		{OID: nlmScalars[3], Val: c32(v.Stats.Evicted)},                   // nlmStatsGlobalNotificationsBumped (age-outs are not bumps)
		{OID: cat(nlmCfgEntry, 2, defaultLog), Val: asn1tree.Str("")},     // nlmConfigLogFilterName: no filter
		{OID: cat(nlmCfgEntry, 3, defaultLog), Val: gauge(uint64(v.Max))}, // nlmConfigLogEntryLimit
		{OID: cat(nlmCfgEntry, 4, defaultLog), Val: asn1tree.Int(1)},      // nlmConfigLogAdminStatus enabled
		{OID: cat(nlmCfgEntry, 5, defaultLog), Val: asn1tree.Int(2)},      // nlmConfigLogOperStatus operational
		{OID: cat(nlmCfgEntry, 6, defaultLog), Val: asn1tree.Int(5)},      // nlmConfigLogStorageType readOnly (from the file)
		{OID: cat(nlmCfgEntry, 7, defaultLog), Val: asn1tree.Int(1)},      // nlmConfigLogEntryStatus active
		{OID: cat(nlmStatsLog, 1, defaultLog), Val: c32(v.Stats.Logged)},  // nlmStatsLogNotificationsLogged
		{OID: cat(nlmStatsLog, 2, defaultLog), Val: c32(v.Stats.Evicted)}, // nlmStatsLogNotificationsBumped
	}
	t, err := asn1tree.Build(es)
	if err != nil {
		panic("notiflog: " + err.Error()) // fixed OIDs: a bug
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

// MIB serves a log as NOTIFICATION-LOG-MIB. Its view is indexed anew
// when the log's Version has changed since the last one, by the first
// reader after the change (a copy of the entries and their positions:
// about 2 ms for a full log); other reads share it. The zero value with
// L set is ready; Ext is where the outcome table goes (empty: none).
type MIB struct {
	L   *Log
	Ext asn1tree.OID

	mu  sync.Mutex // one indexing at a time
	cur atomic.Pointer[mibView]
}

// View is the log as of now: one a request (or a walk) keeps. It is
// indexed only when a request reads the module (lazily), so that requests
// for other objects never pay for a change of the log.
func (m *MIB) View() asn1tree.View { return &lazyView{m: m} }

// current is the view of the log's current version and limits.
func (m *MIB) current() *mibView {
	fresh := func(c *mibView) bool {
		if c == nil {
			return false
		}
		v, n, age := m.L.state()
		return c.v.Version == v && c.v.Max == n && c.v.Age == age
	}
	if c := m.cur.Load(); fresh(c) {
		return c
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := m.cur.Load(); fresh(c) {
		return c
	}
	c := newMIBView(m.L.View(), m.Ext)
	m.cur.Store(c)
	return c
}

// state is what a view of the log depends on besides its entries'
// Version: SetLimits changes the limits without a new Version when it
// drops nothing.
func (l *Log) state() (version uint64, maxEntries int, maxAge time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.version, l.max, l.age
}

// lazyView takes the log's view when first read into the module or the
// outcome table, and keeps it.
type lazyView struct {
	m    *MIB
	once sync.Once
	v    *mibView
}

func (l *lazyView) get() *mibView {
	l.once.Do(func() { l.v = l.m.current() })
	return l.v
}

// touches reports whether [start, end) can hold an object of the view.
// It is asked at every search of a request for any object: it allocates
// nothing.
func (l *lazyView) touches(start, end asn1tree.OID) bool {
	return touchesSubtree(start, end, NLM) || touchesSubtree(start, end, l.m.Ext)
}

// touchesSubtree reports whether [start, end) meets p's subtree (none for
// an empty p): start comes before the first OID past the subtree (it is
// before p or under it) and end after p.
func touchesSubtree(start, end, p asn1tree.OID) bool {
	return len(p) > 0 && (asn1tree.Compare(start, p) < 0 || start.HasPrefix(p)) &&
		(len(end) == 0 || asn1tree.Compare(end, p) > 0)
}

func (l *lazyView) Get(oid asn1tree.OID) (asn1tree.Value, bool) {
	if !oid.HasPrefix(NLM) && (len(l.m.Ext) == 0 || !oid.HasPrefix(l.m.Ext)) {
		return asn1tree.Value{}, false
	}
	return l.get().Get(oid)
}

func (l *lazyView) Search(start asn1tree.OID, include bool, end asn1tree.OID) (asn1tree.OID, asn1tree.Value, bool) {
	if !l.touches(start, end) {
		return nil, asn1tree.Value{}, false
	}
	return l.get().Search(start, include, end)
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
