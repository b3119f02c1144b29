package notiflog

import (
	"encoding/hex"
	"strconv"
	"unicode/utf8"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

// The log in the tree: NotifLog (base.15) with its counters, the entry
// table NotifLog/entry/<index> (nlmLogTable's columns) and, in each
// entry, the VarBind table NotifLog/entry/<index>/var/<n>
// (nlmLogVariableTable), indexed by the entry and the VarBind.
var (
	logCx    = spmi.CxDesc{Name: "NotifLog", Descr: "Notifications sent; SNMP: NOTIFICATION-LOG-MIB, mib-2 92", ASN: spmi.ASNNotifLog}
	entryCx  = spmi.CxDesc{Name: "entry", Descr: "The newest notifications kept, by index", ASN: 20, Inst: ddswire.SiContInst}
	entryTpl = spmi.CxDesc{Descr: "Notification sent", Inst: ddswire.SiNoInst}
	varCx    = spmi.CxDesc{Name: "var", Descr: "The VarBinds of the notification as sent", ASN: 20, Inst: ddswire.SiContInst}
	varTpl   = spmi.CxDesc{Descr: "VarBind"}

	logStats = []spmiwire.StatDesc{
		{Name: "entries", Descr: "Entries kept", ASN: 1, Max: 1000, Val: ddswire.SiQuantity, Units: "entries"},
		{Name: "next", Descr: "Index the next entry gets", ASN: 2, Max: 1000, Val: ddswire.SiQuantity},
		{Name: "maxentries", Descr: "Most entries kept (older ones go first)", ASN: 3, Max: 1000, Val: ddswire.SiQuantity, Units: "entries"},
		{Name: "maxage", Descr: "Age at which entries are dropped", ASN: 4, Max: 86400, Val: ddswire.SiQuantity, Units: "seconds"},
		{Name: "logged", Descr: "Entries added since the daemon started", ASN: 5, Max: 10, Val: ddswire.SiCounter},
		{Name: "agedout", Descr: "Entries dropped for their age", ASN: 6, Max: 10, Val: ddswire.SiCounter},
		{Name: "evicted", Descr: "Entries dropped for the count limit or the file size bound", ASN: 7, Max: 10, Val: ddswire.SiCounter},
		{Name: "saveerr", Descr: "Why the log could not be saved (empty: saved)", ASN: 8, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
	}
	entryStats = []spmiwire.StatDesc{
		{Name: "uptime", Descr: "sysUpTime when sent; 0 for entries of an earlier run", ASN: 1, Max: 1 << 31, Val: ddswire.SiQuantity, Units: "hundredths of a second"},
		{Name: "time", Descr: "When it was sent (seconds since 1970)", ASN: 2, Max: 1 << 31, Val: ddswire.SiQuantity, Units: "seconds since 1970", Form: spmiwire.FormTime},
		{Name: "oid", Descr: "The notification's OID (snmpTrapOID.0)", ASN: 3, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "vars", Descr: "VarBinds kept (after sysUpTime.0, snmpTrapOID.0)", ASN: 4, Max: 64, Val: ddswire.SiQuantity},
		{Name: "omitted", Descr: "VarBinds beyond those kept", ASN: 5, Max: 10, Val: ddswire.SiQuantity},
		{Name: "delivered", Descr: "Delivery paths that took it", ASN: 6, Max: 10, Val: ddswire.SiQuantity},
		{Name: "failed", Descr: "Delivery paths that failed or dropped it", ASN: 7, Max: 10, Val: ddswire.SiQuantity},
		{Name: "outcome", Descr: "Each delivery path's outcome (path: result; ...)", ASN: 8, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
	}
	varStats = []spmiwire.StatDesc{
		{Name: "oid", Descr: "The VarBind's OID", ASN: 1, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "type", Descr: "Its SNMP type as sent", ASN: 2, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "value", Descr: "Its value: text, decimal, an OID, or hex for octets", ASN: 3, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
	}
)

// TextRows is how many of the newest entries NotifLog/entry serves. The
// text view is for people (subagent peek); managers read every entry in
// NOTIFICATION-LOG-MIB, which is indexed, not built. Built in the tree,
// a full log of 10,000 hotset notifications took some 200 MB and was
// rebuilt at every change (scripts/bench-storm.sh, docs/PERFORMANCE.md).
const TextRows = 100

// Provider serves the log. Its part of the tree is rebuilt only when the
// log changes (Shape), so reads cost nothing more.
type Provider struct{ L *Log }

func (p Provider) Name() string { return "NotifLog" }

// Shape is the log's version.
func (p Provider) Shape() any { return p.L.Version() }

func (p Provider) Collect(b *spmi.Builder) error {
	v := p.L.View()
	top, err := b.Context(nil, &logCx)
	if err != nil {
		return err
	}
	if err := b.Stats(top, logStats, []spmiwire.Value{
		spmiwire.Uint(uint64(len(v.Entries))), spmiwire.Uint(uint64(v.Next)), spmiwire.Uint(uint64(v.Max)),
		spmiwire.Uint(uint64(v.Age.Seconds())), spmiwire.Uint(v.Stats.Logged), spmiwire.Uint(v.Stats.AgedOut),
		spmiwire.Uint(v.Stats.Evicted), spmiwire.Text(v.Stats.SaveErr),
	}); err != nil {
		return err
	}
	ents, err := b.Context(top, &entryCx)
	if err != nil {
		return err
	}
	for i := max(0, len(v.Entries)-TextRows); i < len(v.Entries); i++ {
		if err := collectEntry(b, ents, &v.Entries[i]); err != nil {
			return err
		}
	}
	return nil
}

func collectEntry(b *spmi.Builder, ents *spmi.Node, e *Entry) error {
	row, err := b.Instance(ents, &entryTpl, strconv.FormatUint(uint64(e.Index), 10), "", e.Index)
	if err != nil {
		return err
	}
	up := uint64(e.Uptime.Milliseconds() / 10)
	if e.Restored {
		up = 0
	}
	var ok, failed uint64
	for _, o := range e.Outcomes {
		if o.OK {
			ok++
		} else if o.Result != Pending {
			failed++
		}
	}
	if err := b.Stats(row, entryStats, []spmiwire.Value{
		spmiwire.Uint(up), spmiwire.Uint(uint64(e.Time.Unix())), spmiwire.Text(e.OID.String()),
		spmiwire.Uint(uint64(len(e.Vars))), spmiwire.Uint(uint64(e.Omitted)), spmiwire.Uint(ok), spmiwire.Uint(failed),
		spmiwire.Text(Outcomes(e)),
	}); err != nil {
		return err
	}
	vars, err := b.Context(row, &varCx)
	if err != nil {
		return err
	}
	for j := range e.Vars {
		vb := &e.Vars[j]
		n := uint32(j + 1)
		r, err := b.Instance(vars, &varTpl, strconv.Itoa(j+1), "", n)
		if err != nil {
			return err
		}
		if err := b.Stats(r, varStats, []spmiwire.Value{
			spmiwire.Text(vb.OID.String()), spmiwire.Text(vb.Kind.String()), spmiwire.Text(Format(vb.Value())),
		}); err != nil {
			return err
		}
	}
	return nil
}

// Pending is the result of a path that has not answered yet (an inform
// waiting for its acknowledgement).
const Pending = "pending"

// Format writes a value as the log serves it: printable octets as they
// are, others in hex; numbers in decimal; an OID dotted.
func Format(v asn1tree.Value) string {
	switch v.Kind {
	case asn1tree.OctetString:
		if utf8.ValidString(v.Str) && printable(v.Str) {
			return v.Str
		}
		return hex.EncodeToString([]byte(v.Str))
	case asn1tree.ObjectIdentifier:
		return v.OID.String()
	case asn1tree.Integer32:
		return strconv.FormatInt(int64(int32(v.Num)), 10)
	case asn1tree.NoValue:
		return ""
	}
	return strconv.FormatUint(v.Num, 10)
}

func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 && r != '\t' && r != '\n' || r == 0x7f {
			return false
		}
	}
	return true
}
