package spmi

import (
	"math"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/internal/foldlog"
)

// SNMPKind is the SNMP type a statistic is served as, by its meaning:
//   - counters: Counter64;
//   - text: OctetString (DisplayString, at most MaxDisplayString octets);
//   - quantities whose low scale is negative: Integer32 (negative values
//     served as negative, clamped to 32 bits);
//   - wide quantities, which can really pass 2^32 in their unit:
//     CounterBasedGauge64 (RFC 2856) on the Counter64 wire type;
//   - other quantities: Gauge32;
//   - booleans (FormBool): Integer32 carrying a TruthValue;
//   - times (FormTime): OctetString carrying a DateAndTime.
//
// A quantity is otherwise never Counter64, so managers do not compute
// rates of levels. Floats are served as integers scaled by 10^Scale.
func SNMPKind(d *spmiwire.StatDesc) asn1tree.Kind {
	switch {
	case d.Form == spmiwire.FormBool:
		return asn1tree.Integer32
	case d.Form == spmiwire.FormTime:
		return asn1tree.OctetString
	case d.Data == spmiwire.SiText:
		return asn1tree.OctetString
	case d.Val == ddswire.SiCounter:
		return asn1tree.Counter64
	case d.Min < 0:
		return asn1tree.Integer32
	case d.Wide:
		return asn1tree.Counter64
	}
	return asn1tree.Gauge32
}

// FitsGauge32 reports whether a quantity whose high scale value is max
// (before the 10^scale of a float) stays within a Gauge32: suppliers that
// declare more get a 64-bit gauge (StatDesc.Wide).
func FitsGauge32(max int64, scale uint8) bool {
	return float64(max)*math.Pow10(int(scale)) <= math.MaxUint32
}

// SNMPValue converts a raw value to its served form; NoValue stays NoValue.
// Values outside a 32-bit type's range are clamped to it, so a manager sees
// the limit, never a wrapped number.
func SNMPValue(d *spmiwire.StatDesc, v spmiwire.Value) asn1tree.Value {
	if !v.OK() {
		return asn1tree.Value{}
	}
	switch d.Form {
	case spmiwire.FormBool:
		if v.Float64() != 0 {
			return asn1tree.Int(1) // TruthValue true
		}
		return asn1tree.Int(2) // false
	case spmiwire.FormTime:
		return asn1tree.Str(DateAndTime(time.Unix(int64(v.Uint64()), 0)))
	}
	k := SNMPKind(d)
	if k == asn1tree.OctetString {
		return asn1tree.Value{Kind: k, Str: foldlog.Cut(v.String(), MaxDisplayString)}
	}
	var f float64
	exact := !v.IsFloat() && d.Scale == 0
	if !exact {
		f = v.Float64() * math.Pow10(int(d.Scale))
		f = math.Round(f)
	}
	switch k {
	case asn1tree.Counter64:
		if exact {
			return asn1tree.Value{Kind: k, Num: v.Uint64()}
		}
		return asn1tree.Value{Kind: k, Num: spmiwire.Float(f).Uint64()}
	case asn1tree.Integer32:
		var i int64
		if exact {
			i = v.Int64()
		} else {
			i = int64(math.Max(math.Min(f, math.MaxInt32), math.MinInt32))
		}
		i = max(min(i, math.MaxInt32), math.MinInt32)
		return asn1tree.Int(int32(i))
	default:
		var u uint64
		if exact {
			u = v.Uint64()
		} else {
			u = spmiwire.Float(f).Uint64()
		}
		return asn1tree.Gauge(uint32(min(u, math.MaxUint32)))
	}
}

// MaxDisplayString is DisplayString's SIZE (RFC 2579), which the MIB
// declares for text: longer text (an error naming a long path) is served
// cut to it, so that an answer has a size bound and a Get of the
// exporter's scalars always fits a message (mib's
// TestExporterGetsFitTheResponder).
const MaxDisplayString = 255

// DateAndTime is t as SNMPv2-TC's DateAndTime: 11 octets in UTC (year in
// two octets, month, day, hour, minutes, seconds, deciseconds, '+', 0, 0),
// so that a manager shows the moment whatever its time zone.
func DateAndTime(t time.Time) string {
	t = t.UTC()
	y := t.Year()
	return string([]byte{byte(y >> 8), byte(y), byte(t.Month()), byte(t.Day()),
		byte(t.Hour()), byte(t.Minute()), byte(t.Second()), byte(t.Nanosecond() / 1e8), '+', 0, 0})
}
