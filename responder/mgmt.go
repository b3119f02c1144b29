package responder

import (
	"sort"

	"github.com/perfagent/subagent/asn1tree"
)

// mgmtObject is one scalar the responder serves about itself.
type mgmtObject struct {
	oid  asn1tree.OID // with its instance .0
	v3   bool         // only with an SNMPv3 engine
	read func(r *Responder) asn1tree.Value
}

func counter(f func(s *Stats) uint64) func(*Responder) asn1tree.Value {
	return func(r *Responder) asn1tree.Value {
		return asn1tree.Value{Kind: asn1tree.Counter32, Num: uint64(uint32(f(&r.stats)))}
	}
}

func constant(v asn1tree.Value) func(*Responder) asn1tree.Value {
	return func(*Responder) asn1tree.Value { return v }
}

var zero32 = asn1tree.Value{Kind: asn1tree.Counter32}

// mgmtObjects, in OID order: the SNMPv2-MIB snmp group (RFC 3418; the
// obsolete SNMPv1 counters left out), SNMP-FRAMEWORK-MIB's snmpEngine
// (RFC 3411), SNMP-MPD-MIB's snmpMPDStats (RFC 3412), SNMP-TARGET-MIB's
// context counters (RFC 3413) and SNMP-USER-BASED-SM-MIB's usmStats
// (RFC 3414). The usmUserTable is not served: it would name the users.
var mgmtObjects = []mgmtObject{
	{asn1tree.OID{1, 3, 6, 1, 2, 1, 11, 1, 0}, false, counter(func(s *Stats) uint64 { return s.InPkts.Load() })},
	{asn1tree.OID{1, 3, 6, 1, 2, 1, 11, 3, 0}, false, counter(func(s *Stats) uint64 { return s.InBadVersions.Load() })},
	{asn1tree.OID{1, 3, 6, 1, 2, 1, 11, 4, 0}, false, counter(func(s *Stats) uint64 { return s.InBadCommunityNames.Load() })},
	{asn1tree.OID{1, 3, 6, 1, 2, 1, 11, 5, 0}, false, constant(zero32)}, // snmpInBadCommunityUses: no community may write
	{asn1tree.OID{1, 3, 6, 1, 2, 1, 11, 6, 0}, false, counter(func(s *Stats) uint64 { return s.InASNParseErrs.Load() })},
	{asn1tree.OID{1, 3, 6, 1, 2, 1, 11, 30, 0}, false, constant(asn1tree.Int(2))}, // snmpEnableAuthenTraps: disabled
	{asn1tree.OID{1, 3, 6, 1, 2, 1, 11, 31, 0}, false, counter(func(s *Stats) uint64 { return s.SilentDrops.Load() })},
	{asn1tree.OID{1, 3, 6, 1, 2, 1, 11, 32, 0}, false, constant(zero32)}, // snmpProxyDrops: no proxy
	{asn1tree.OID{1, 3, 6, 1, 6, 3, 10, 2, 1, 1, 0}, true, func(r *Responder) asn1tree.Value { return asn1tree.Str(r.engine.idStr) }},
	{asn1tree.OID{1, 3, 6, 1, 6, 3, 10, 2, 1, 2, 0}, true, func(r *Responder) asn1tree.Value { return asn1tree.Int(int32(r.engine.boots)) }},
	{asn1tree.OID{1, 3, 6, 1, 6, 3, 10, 2, 1, 3, 0}, true, func(r *Responder) asn1tree.Value { return asn1tree.Int(int32(r.engineTime())) }},
	{asn1tree.OID{1, 3, 6, 1, 6, 3, 10, 2, 1, 4, 0}, true, constant(asn1tree.Int(MaxMsgSizeCap))},
	{asn1tree.OID{1, 3, 6, 1, 6, 3, 11, 2, 1, 1, 0}, true, counter(func(s *Stats) uint64 { return s.UnknownSecurityModels.Load() })},
	{asn1tree.OID{1, 3, 6, 1, 6, 3, 11, 2, 1, 2, 0}, true, counter(func(s *Stats) uint64 { return s.InvalidMsgs.Load() })},
	{asn1tree.OID{1, 3, 6, 1, 6, 3, 11, 2, 1, 3, 0}, true, counter(func(s *Stats) uint64 { return s.UnknownPDUHandlers.Load() })},
	{asn1tree.OID{1, 3, 6, 1, 6, 3, 12, 1, 4, 0}, true, constant(zero32)}, // snmpUnavailableContexts
	{asn1tree.OID{1, 3, 6, 1, 6, 3, 12, 1, 5, 0}, true, counter(func(s *Stats) uint64 { return s.UnknownContexts.Load() })},
	{oidUnsupportedSecLevels, true, counter(func(s *Stats) uint64 { return s.UnsupportedSecLevels.Load() })},
	{oidNotInTimeWindows, true, counter(func(s *Stats) uint64 { return s.NotInTimeWindows.Load() })},
	{oidUnknownUserNames, true, counter(func(s *Stats) uint64 { return s.UnknownUserNames.Load() })},
	{oidUnknownEngineIDs, true, counter(func(s *Stats) uint64 { return s.UnknownEngineIDs.Load() })},
	{oidWrongDigests, true, counter(func(s *Stats) uint64 { return s.WrongDigests.Load() })},
	{oidDecryptionErrors, true, counter(func(s *Stats) uint64 { return s.DecryptionErrors.Load() })},
}

// mgmtView serves mgmtObjects (those of the v3 engine only with one).
type mgmtView struct{ r *Responder }

func (v mgmtView) has(i int) bool { return !mgmtObjects[i].v3 || v.r.engine != nil }

func (v mgmtView) Get(o asn1tree.OID) (asn1tree.Value, bool) {
	i := sort.Search(len(mgmtObjects), func(i int) bool { return asn1tree.Compare(mgmtObjects[i].oid, o) >= 0 })
	if i < len(mgmtObjects) && v.has(i) && asn1tree.Compare(mgmtObjects[i].oid, o) == 0 {
		return mgmtObjects[i].read(v.r), true
	}
	return asn1tree.Value{}, false
}

func (v mgmtView) Search(start asn1tree.OID, include bool, end asn1tree.OID) (asn1tree.OID, asn1tree.Value, bool) {
	i := sort.Search(len(mgmtObjects), func(i int) bool {
		c := asn1tree.Compare(mgmtObjects[i].oid, start)
		return c > 0 || (include && c == 0)
	})
	for ; i < len(mgmtObjects); i++ {
		o := mgmtObjects[i].oid
		if len(end) > 0 && asn1tree.Compare(o, end) >= 0 {
			break
		}
		if v.has(i) {
			return o, mgmtObjects[i].read(v.r), true
		}
	}
	return nil, asn1tree.Value{}, false
}

// Defines: each object is a scalar, its OID without the .0.
func (v mgmtView) Defines(name asn1tree.OID) bool {
	for i, m := range mgmtObjects {
		if v.has(i) && name.HasPrefix(m.oid[:len(m.oid)-1]) {
			return true
		}
	}
	return false
}

// filterView shows only the subtrees a v3 user may read (sorted, none
// inside another: see V3.users).
type filterView struct {
	main asn1tree.View
	subs []asn1tree.OID
}

func (v *filterView) allowed(o asn1tree.OID) bool {
	for _, s := range v.subs {
		if o.HasPrefix(s) {
			return true
		}
	}
	return false
}

func (v *filterView) Get(o asn1tree.OID) (asn1tree.Value, bool) {
	if !v.allowed(o) {
		return asn1tree.Value{}, false
	}
	return v.main.Get(o)
}

func (v *filterView) Search(start asn1tree.OID, include bool, end asn1tree.OID) (asn1tree.OID, asn1tree.Value, bool) {
	for _, s := range v.subs {
		from, inc := start, include
		switch {
		case asn1tree.Compare(start, s) < 0:
			from, inc = s, true
		case !start.HasPrefix(s):
			continue // this subtree lies before start
		}
		o, val, ok := v.main.Search(from, inc, end)
		if !ok {
			return nil, asn1tree.Value{}, false
		}
		if o.HasPrefix(s) {
			return o, val, true
		}
	}
	return nil, asn1tree.Value{}, false
}

func (v *filterView) Defines(name asn1tree.OID) bool {
	return v.allowed(name) && asn1tree.Defines(v.main, name)
}
