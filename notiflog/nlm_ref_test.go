package notiflog

import (
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

// buildReference is the tree of v as NOTIFICATION-LOG-MIB, with the outcome
// table at ext.1 (its entry ext.1.1) when ext is not empty. It reads v only.
func buildReference(v *View, ext asn1tree.OID) *asn1tree.Tree[asn1tree.Value] {
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
			typ, col, ok := varType(vb.Kind)
			if !ok {
				continue
			}
			vrow := asn1tree.OID{0, e.Index, uint32(j + 1)}
			add(cat(nlmVarEntry, colVarID, vrow), asn1tree.Value{Kind: asn1tree.ObjectIdentifier, OID: vb.OID})
			add(cat(nlmVarEntry, colVarType, vrow), asn1tree.Int(int32(typ)))
			add(cat(nlmVarEntry, col, vrow), vb.Value())
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
