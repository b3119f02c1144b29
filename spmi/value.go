package spmi

import (
	"math"
	"strconv"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

type valKind uint8

const (
	vNone valKind = iota
	vUint
	vInt
	vFloat
	vText
)

// Value is a statistic's raw value as a provider read it. The zero Value
// is "no value" (SiNoValue): the source could not be read.
type Value struct {
	kind valKind
	u    uint64
	f    float64
	s    string
}

// NoValue is the value of a statistic whose source failed.
var NoValue = Value{}

// Unmeasured is "no value" for a statistic nothing has measured yet, with
// why (a host created a moment ago: "not measured yet: cannot resolve
// ..."): readers are told that rather than of a failed source.
func Unmeasured(why string) Value { return Value{kind: vNone, s: why} }

// Why is the reason a value is missing (Unmeasured), "" when none is known.
func (v Value) Why() string {
	if v.kind != vNone {
		return ""
	}
	return v.s
}

// Uint is an unsigned integer value (counters, sizes).
func Uint(v uint64) Value { return Value{kind: vUint, u: v} }

// Int is a signed integer value.
func Int(v int64) Value { return Value{kind: vInt, u: uint64(v)} }

// Float is a floating-point value.
func Float(v float64) Value {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return NoValue
	}
	return Value{kind: vFloat, f: v}
}

// Text is a text value (SiText).
func Text(s string) Value { return Value{kind: vText, s: s} }

// OK reports whether the value was read.
func (v Value) OK() bool { return v.kind != vNone }

// IsText reports whether the value is text.
func (v Value) IsText() bool { return v.kind == vText }

// Float64 returns the value as a float (0 for text and no value).
func (v Value) Float64() float64 {
	switch v.kind {
	case vUint:
		return float64(v.u)
	case vInt:
		return float64(int64(v.u))
	case vFloat:
		return v.f
	}
	return 0
}

// Uint64 returns the value as an unsigned integer, truncating floats and
// clamping negatives to zero.
func (v Value) Uint64() uint64 {
	switch v.kind {
	case vUint:
		return v.u
	case vInt:
		if int64(v.u) < 0 {
			return 0
		}
		return v.u
	case vFloat:
		if v.f <= 0 {
			return 0
		}
		if v.f >= math.MaxUint64 {
			return math.MaxUint64
		}
		return uint64(v.f)
	}
	return 0
}

// TextValue returns the text of a text value.
func (v Value) TextValue() string { return v.s }

// String formats the value for people.
func (v Value) String() string {
	switch v.kind {
	case vUint:
		return strconv.FormatUint(v.u, 10)
	case vInt:
		return strconv.FormatInt(int64(v.u), 10)
	case vFloat:
		return strconv.FormatFloat(v.f, 'f', -1, 64)
	case vText:
		return v.s
	}
	return "SiNoValue"
}

// Counter difference across a wrap or reset: a counter that went backwards
// was reset (CPU hotplug, interface re-created), so the change is unknown
// and reported as zero rather than as a huge number.
func counterChange(prev, cur Value) float64 {
	if prev.kind == vFloat || cur.kind == vFloat {
		d := cur.Float64() - prev.Float64()
		if d < 0 {
			return 0
		}
		return d
	}
	a, b := prev.Uint64(), cur.Uint64()
	if b < a {
		return 0
	}
	return float64(b - a)
}

// SNMPKind is the SNMP type a statistic is served as, by its meaning:
//   - counters: Counter64;
//   - text: OctetString (DisplayString);
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
func (d *StatDesc) SNMPKind() asn1tree.Kind {
	switch {
	case d.Form == FormBool:
		return asn1tree.Integer32
	case d.Form == FormTime:
		return asn1tree.OctetString
	case d.Data == SiText:
		return asn1tree.OctetString
	case d.Val == SiCounter:
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
func (d *StatDesc) SNMPValue(v Value) asn1tree.Value {
	if !v.OK() {
		return asn1tree.Value{}
	}
	switch d.Form {
	case FormBool:
		if v.Float64() != 0 {
			return asn1tree.Int(1) // TruthValue true
		}
		return asn1tree.Int(2) // false
	case FormTime:
		return asn1tree.Str(DateAndTime(time.Unix(int64(v.Uint64()), 0)))
	}
	k := d.SNMPKind()
	if k == asn1tree.OctetString {
		return asn1tree.Value{Kind: k, Str: v.String()}
	}
	var f float64
	exact := v.kind != vFloat && d.Scale == 0
	if !exact {
		f = v.Float64() * math.Pow10(int(d.Scale))
		f = math.Round(f)
	}
	switch k {
	case asn1tree.Counter64:
		if exact {
			return asn1tree.Value{Kind: k, Num: v.Uint64()}
		}
		return asn1tree.Value{Kind: k, Num: Float(f).Uint64()}
	case asn1tree.Integer32:
		var i int64
		if exact {
			if v.kind == vUint && v.u > math.MaxInt32 {
				i = math.MaxInt32
			} else {
				i = int64(v.u)
			}
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
			u = Float(f).Uint64()
		}
		return asn1tree.Gauge(uint32(min(u, math.MaxUint32)))
	}
}

// DateAndTime is t as SNMPv2-TC's DateAndTime: 11 octets in UTC (year in
// two octets, month, day, hour, minutes, seconds, deciseconds, '+', 0, 0),
// so that a manager shows the moment whatever its time zone.
func DateAndTime(t time.Time) string {
	t = t.UTC()
	y := t.Year()
	return string([]byte{byte(y >> 8), byte(y), byte(t.Month()), byte(t.Day()),
		byte(t.Hour()), byte(t.Minute()), byte(t.Second()), byte(t.Nanosecond() / 1e8), '+', 0, 0})
}
