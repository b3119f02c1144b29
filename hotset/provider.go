package hotset

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

// ASN is the Hotset context's top-level number (docs/TREE.md); 14.0 is
// the notification objects' arc, so hotsets are numbered from 1.
const ASN = spmi.ASNHotset

// Numbers under each hotset instance.
const (
	feedASN = 20
	excpASN = 21
)

// valueUnits are those of the compared values: they vary with the
// watched statistic, which Hotset/<h>/stat names.
const valueUnits = "units of the watched statistic (per second for counters)"

var (
	hotsetCx = spmi.CxDesc{Name: "Hotset", Descr: "Hotsets: one statistic watched across peers", ASN: ASN, Inst: ddswire.SiCfgInst}
	setTpl   = spmi.CxDesc{Descr: "Hotset"}
	feedCx   = spmi.CxDesc{Name: "feed", Descr: "The current items, hottest first per peer set", ASN: feedASN, Inst: ddswire.SiContInst}
	feedTpl  = spmi.CxDesc{Descr: "Feed row"}
	excpCx   = spmi.CxDesc{Name: "excp", Descr: "The most recent exceptions, by sequence number", ASN: excpASN, Inst: ddswire.SiContInst}
	excpTpl  = spmi.CxDesc{Descr: "Exception"}

	setStats = []spmiwire.StatDesc{
		{Name: "stat", Descr: "Watched statistic, * standing for the peers", ASN: 1, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "threshold", Descr: "Threshold (rate/s for counters; negative: below)", ASN: 2, Min: -100, Max: 100, Val: ddswire.SiQuantity},
		{Name: "maxresp", Descr: "Most items per peer set (0: all)", ASN: 3, Max: 10, Val: ddswire.SiQuantity},
		{Name: "feedtype", Descr: "When items are fed: none, threshold or always", ASN: 4, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "excptype", Descr: "What a crossing raises: none, exception, trap or both", ASN: 5, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "severity", Descr: "Severity of the exceptions", ASN: 6, Max: 10, Val: ddswire.SiQuantity},
		{Name: "trapno", Descr: "Trap number: notifications are base.0.trapno", ASN: 7, Max: 100, Val: ddswire.SiQuantity},
		{Name: "frequency", Descr: "Least time between two events of a peer set", ASN: 8, Max: 3600, Val: ddswire.SiQuantity, Units: "seconds"},
		{Name: "avail", Descr: "Values qualifying for the feed (avail_resp)", ASN: 9, Max: 100, Val: ddswire.SiQuantity},
		{Name: "count", Descr: "Rows of the feed (count, capped by maxresp)", ASN: 10, Max: 100, Val: ddswire.SiQuantity},
		{Name: "groups", Descr: "Peer sets (one per lowest-level parent)", ASN: 11, Max: 10, Val: ddswire.SiQuantity},
		{Name: "events", Descr: "Exceptions and notifications raised", ASN: 12, Max: 1, Val: ddswire.SiCounter},
		{Name: "error", Descr: "SPMI error code of the last evaluation (0: none)", ASN: 13, Max: 200, Val: ddswire.SiQuantity},
		{Name: "errmsg", Descr: "What went wrong at the last evaluation", ASN: 14, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "rearm", Descr: "Falling threshold: a raised peer re-arms past it (0: none)", ASN: 15, Min: -100, Max: 100, Val: ddswire.SiQuantity},
		{Name: "cleared", Descr: "1: a cleared event when a raised peer re-arms", ASN: 16, Max: 1, Val: ddswire.SiQuantity, Form: spmiwire.FormBool},
		{Name: "notifyheld", Descr: "Reports held back by the rate limit (events still recorded)", ASN: 17, Max: 1, Val: ddswire.SiCounter},
		{Name: "notifyburst", Descr: "Rate limit: reports at once", ASN: 18, Max: 100, Val: ddswire.SiQuantity},
		{Name: "notifyinterval", Descr: "Rate limit: then one report per this time", ASN: 19, Max: 3600, Val: ddswire.SiQuantity, Units: "seconds"},
	}
	feedStats = []spmiwire.StatDesc{
		{Name: "rank", Descr: "Rank within the peer set, 1 the hottest", ASN: 1, Max: 10, Val: ddswire.SiQuantity},
		{Name: "name", Descr: "Name of the peer context", ASN: 2, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "value", Descr: "Value compared: rate/s of a counter, else level", ASN: 3, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 2, Wide: true, Units: valueUnits},
		{Name: "oid", Descr: "OID of the peer statistic's instance", ASN: 4, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "group", Descr: "Path of the peer set's parent context", ASN: 5, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "path", Descr: "Path of the peer statistic", ASN: 6, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
	}
	excpStats = []spmiwire.StatDesc{
		{Name: "time", Descr: "When it was raised (seconds since 1970)", ASN: 1, Max: 1 << 31, Val: ddswire.SiQuantity, Units: "seconds since 1970", Form: spmiwire.FormTime},
		{Name: "severity", Descr: "Severity of the exception", ASN: 2, Max: 10, Val: ddswire.SiQuantity},
		{Name: "group", Descr: "Path of the peer set's parent context", ASN: 3, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "count", Descr: "Peers beyond the threshold (capped by maxresp)", ASN: 4, Max: 10, Val: ddswire.SiQuantity},
		{Name: "name", Descr: "Name of the hottest peer", ASN: 5, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "value", Descr: "Value of the hottest peer", ASN: 6, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 2, Wide: true, Units: valueUnits},
		{Name: "peers", Descr: "Peers beyond the threshold with their values", ASN: 7, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
	}
)

// Provider serves the engine's last results under Hotset. Collect never
// evaluates: the evaluation loop does, on a snapshot this provider is
// part of.
type Provider struct{ E *Engine }

func (p Provider) Name() string { return "Hotset" }

// Description is the hotset instance's description: its statistic path,
// preceded by "trap N: " when it sends notifications. The MIB generator
// reads the trap number from it (mib.TrapNumbers).
func Description(d Def) string {
	if d.Excp.Traps() && d.TrapNo > 0 {
		return fmt.Sprintf("trap %d: %s", d.TrapNo, d.Path())
	}
	return d.Path()
}

func (p Provider) Collect(b *spmi.Builder) error {
	views := p.E.Views()
	top, err := b.Context(nil, &hotsetCx)
	if err != nil {
		return err
	}
	for _, v := range views {
		// Only this hotset is left out: its row was refused (SNMP SET,
		// start, reload) before it could get here.
		err := collectSet(b, top, v)
		if b.Unnumbered("Hotset numbering", err) {
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Parent is the path hotsets are numbered under.
const Parent = "Hotset"

func collectSet(b *spmi.Builder, top *spmi.Node, v View) error {
	d, r := v.Def, v.Result
	// Numbered by name in the persisted numbering: a hotset keeps its
	// OIDs when others are added, removed or reordered.
	cx, err := b.Instance(top, &setTpl, d.Name, Description(d), 0)
	if err != nil {
		return err
	}
	rows, avail := 0, 0
	for _, g := range r.Groups {
		rows += len(g.Items)
		avail += g.Avail
	}
	evaluated := !r.Time.IsZero()
	// Before the first evaluation the results are not measured yet (a
	// reader's NotYet, never a failed source), with the reason.
	notYet := spmiwire.Unmeasured("not evaluated yet: hotsets are evaluated every hotset.interval")
	opt := func(val spmiwire.Value) spmiwire.Value {
		if !evaluated {
			return notYet
		}
		return val
	}
	// Empty after an evaluation without error.
	errmsg := notYet
	switch {
	case r.Err != nil:
		errmsg = spmiwire.Text(r.Err.Error())
	case evaluated:
		errmsg = spmiwire.Text("")
	}
	vals := []spmiwire.Value{
		spmiwire.Text(d.Path()), spmiwire.Int(int64(d.Threshold)), spmiwire.Uint(uint64(d.MaxResp)),
		spmiwire.Text(d.Feed.String()), spmiwire.Text(d.Excp.String()), spmiwire.Uint(uint64(d.Severity)),
		spmiwire.Uint(uint64(d.TrapNo)), spmiwire.Uint(uint64(d.Frequency.Seconds())),
		opt(spmiwire.Uint(uint64(avail))), opt(spmiwire.Uint(uint64(rows))), opt(spmiwire.Uint(uint64(len(r.Groups)))),
		spmiwire.Uint(v.Events), opt(spmiwire.Uint(uint64(spmierr.CodeOf(r.Err)))), errmsg,
		spmiwire.Int(int64(d.Rearm)), spmiwire.Uint(boolUint(d.Cleared)),
		spmiwire.Uint(v.Held), spmiwire.Uint(uint64(v.Limit.Burst)), spmiwire.Uint(uint64(v.Limit.Every.Seconds())),
	}
	if err := b.Stats(cx, setStats, vals); err != nil {
		return err
	}
	feed, err := b.Context(cx, &feedCx)
	if err != nil {
		return err
	}
	row := uint32(0)
	for _, g := range r.Groups {
		for i, it := range g.Items {
			row++
			inst, err := b.Instance(feed, &feedTpl, strconv.Itoa(int(row)), "", row)
			if err != nil {
				return err
			}
			if err := b.Stats(inst, feedStats, []spmiwire.Value{
				spmiwire.Uint(uint64(i + 1)), spmiwire.Text(it.Name), spmiwire.Float(it.Value),
				spmiwire.Text(it.OID.String()), spmiwire.Text(g.Parent), spmiwire.Text(it.Path),
			}); err != nil {
				return err
			}
		}
	}
	excp, err := b.Context(cx, &excpCx)
	if err != nil {
		return err
	}
	for _, x := range v.Exceptions {
		inst, err := b.Instance(excp, &excpTpl, strconv.FormatUint(uint64(x.Seq), 10), "", x.Seq)
		if err != nil {
			return err
		}
		top := x.Items[0]
		if err := b.Stats(inst, excpStats, []spmiwire.Value{
			spmiwire.Uint(uint64(x.Time.Unix())), spmiwire.Uint(uint64(x.Def.Severity)), spmiwire.Text(x.Parent),
			spmiwire.Uint(uint64(len(x.Items))), spmiwire.Text(top.Name), spmiwire.Float(top.Value), spmiwire.Text(Peers(x.Items)),
		}); err != nil {
			return err
		}
	}
	return nil
}

func boolUint(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// maxText bounds a text value (DisplayString holds 255 octets).
const maxText = 255

// FormatValue writes a compared value in decimal, rounded to the 0.01
// the feed and exception tables keep: "93.5", "1250000000", "-3.25";
// beyond 32 characters (above 1e30) with an exponent.
func FormatValue(v float64) string {
	s := strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
	if len(s) > 32 {
		s = strconv.FormatFloat(v, 'g', 6, 64)
	}
	return s
}

// Peers lists items as "sda=93.5 sdb=88" for logs and the exceptions table.
func Peers(items []Item) string {
	var sb strings.Builder
	for i, it := range items {
		if i > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "%s=%s", it.Name, FormatValue(it.Value))
		if sb.Len() > maxText {
			return sb.String()[:maxText-3] + "..."
		}
	}
	return sb.String()
}
