package responder

import (
	"fmt"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/perfagent/subagent/asn1tree"
)

// System is what the responder serves of the SNMPv2-MIB system group
// (RFC 3418), so that managers can discover it: under AgentX the master
// serves its own.
type System struct {
	Descr    string       // sysDescr
	ObjectID asn1tree.OID // sysObjectID; with ORDescr also the one sysORTable entry's sysORID
	Contact  string       // sysContact
	Name     string       // sysName
	Location string       // sysLocation
	ORDescr  string       // sysORDescr of the module (MODULE-IDENTITY ObjectID)
}

// sysServices is 72: applications (64) and end-to-end transport (8), as
// for a host (RFC 3418 and net-snmp's default).
const sysServices = 72

// The system group's objects under 1.3.6.1.2.1.1.
var (
	sysGroup        = asn1tree.OID{1, 3, 6, 1, 2, 1, 1}
	sysUpTimeOID    = sysGroup.Append(3, 0)
	sysORLastChange = sysGroup.Append(8, 0)
)

// check validates the strings: DisplayString is at most 255 octets of
// printable text. The error names the field the way Config does.
func (s System) check() error {
	for _, f := range []struct{ name, v string }{{"descr", s.Descr}, {"contact", s.Contact}, {"name", s.Name}, {"location", s.Location}, {"or_descr", s.ORDescr}} {
		if err := CheckDisplayString(f.v); err != nil {
			return fmt.Errorf("system %s: %w", f.name, err)
		}
	}
	if len(s.ObjectID) > 0 && len(s.ObjectID) < 2 {
		return fmt.Errorf("system object id %s: fewer than 2 sub-identifiers", s.ObjectID)
	}
	return nil
}

// CheckDisplayString tells whether s fits a DisplayString (RFC 2579): at
// most 255 octets, no control characters but tab and line ends.
func CheckDisplayString(s string) error {
	if len(s) > 255 {
		return fmt.Errorf("%d bytes, at most 255", len(s))
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%q is not valid UTF-8", s)
	}
	for _, r := range s {
		if (r < ' ' && r != '\t' && r != '\r' && r != '\n') || r == 0x7f {
			return fmt.Errorf("%q holds the control character %q", s, r)
		}
	}
	return nil
}

// sysEntries is the system group in OID order; sysUpTime's value is
// filled per request (sysView).
func (s System) entries() []asn1tree.Entry[asn1tree.Value] {
	oid := func(v asn1tree.OID) asn1tree.Value { return asn1tree.Value{Kind: asn1tree.ObjectIdentifier, OID: v} }
	ticks := asn1tree.Value{Kind: asn1tree.TimeTicks}
	id := s.ObjectID
	if len(id) == 0 {
		id = asn1tree.OID{0, 0} // zeroDotZero: no identification (RFC 3418)
	}
	e := []asn1tree.Entry[asn1tree.Value]{
		{OID: sysGroup.Append(1, 0), Val: asn1tree.Str(s.Descr)},
		{OID: sysGroup.Append(2, 0), Val: oid(id)},
		{OID: sysUpTimeOID, Val: ticks},
		{OID: sysGroup.Append(4, 0), Val: asn1tree.Str(s.Contact)},
		{OID: sysGroup.Append(5, 0), Val: asn1tree.Str(s.Name)},
		{OID: sysGroup.Append(6, 0), Val: asn1tree.Str(s.Location)},
		{OID: sysGroup.Append(7, 0), Val: asn1tree.Int(sysServices)},
		{OID: sysORLastChange, Val: ticks}, // the one entry exists since start
	}
	if len(s.ObjectID) > 0 {
		// sysOREntry 1: sysORID, sysORDescr, sysORUpTime (its index is
		// not-accessible).
		e = append(e,
			asn1tree.Entry[asn1tree.Value]{OID: sysGroup.Append(9, 1, 2, 1), Val: oid(s.ObjectID)},
			asn1tree.Entry[asn1tree.Value]{OID: sysGroup.Append(9, 1, 3, 1), Val: asn1tree.Str(s.ORDescr)},
			asn1tree.Entry[asn1tree.Value]{OID: sysGroup.Append(9, 1, 4, 1), Val: ticks})
	}
	return e
}

// sysView serves the system group before the tree's view, merged in OID
// order so that walks go through both. It lives in the request's scratch,
// so answering allocates nothing.
type sysView struct {
	sys   *asn1tree.Tree[asn1tree.Value]
	mgmt  mgmtView // the snmp group and the SNMPv3 engine's objects
	main  asn1tree.View
	ticks uint32 // sysUpTime for this request
}

// uptime fills sysUpTime.0's value.
func (v *sysView) uptime(o asn1tree.OID, val asn1tree.Value) asn1tree.Value {
	if asn1tree.Compare(o, sysUpTimeOID) == 0 {
		val.Num = uint64(v.ticks)
	}
	return val
}

// ticks are the hundredths of a second from start to now, wrapping at
// 2^32 as TimeTicks do.
func ticks(start, now time.Time) uint32 {
	return uint32(max(now.Sub(start), 0) / (10 * time.Millisecond))
}

func (v *sysView) Get(o asn1tree.OID) (asn1tree.Value, bool) {
	if val, ok := v.sys.Get(o); ok {
		return v.uptime(o, val), true
	}
	if val, ok := v.mgmt.Get(o); ok {
		return val, true
	}
	return v.main.Get(o)
}

func (v *sysView) Search(start asn1tree.OID, include bool, end asn1tree.OID) (asn1tree.OID, asn1tree.Value, bool) {
	so, sv, sok := v.sys.Search(start, include, end)
	if sok {
		sv = v.uptime(so, sv)
	}
	if o, val, ok := v.mgmt.Search(start, include, end); ok && (!sok || asn1tree.Compare(o, so) < 0) {
		so, sv, sok = o, val, true
	}
	mo, mv, mok := v.main.Search(start, include, end)
	if sok && (!mok || asn1tree.Compare(so, mo) <= 0) {
		return so, sv, true
	}
	return mo, mv, mok
}

// Defines implements asn1tree.Definer: the system group's objects are its
// entries' names without their one instance arc; the tree's come after.
func (v *sysView) Defines(name asn1tree.OID) bool {
	for i := range v.sys.Len() {
		if o, _ := v.sys.At(i); name.HasPrefix(o[:len(o)-1]) {
			return true
		}
	}
	return v.mgmt.Defines(name) || asn1tree.Defines(v.main, name)
}

// DefaultSysDescr is sysDescr when none is configured: the program, its
// version and the kernel as uname(2) names it, as net-snmp's is.
func DefaultSysDescr(program, version string) string {
	d := program + " " + version
	var u syscall.Utsname
	if syscall.Uname(&u) == nil {
		d += " " + utsString(u.Sysname[:]) + " " + utsString(u.Release[:]) + " " + utsString(u.Version[:]) + " " + utsString(u.Machine[:])
	}
	if len(d) > 255 {
		d = d[:255]
	}
	return d
}

func utsString[T int8 | uint8](b []T) string {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c == 0 {
			break
		}
		out = append(out, byte(c))
	}
	return string(out)
}
