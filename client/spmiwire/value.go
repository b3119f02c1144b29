package spmiwire

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
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

// IsFloat reports whether the value is a float.
func (v Value) IsFloat() bool { return v.kind == vFloat }

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

// Int64 returns the value as a signed integer, truncating floats and
// clamping what is out of range.
func (v Value) Int64() int64 {
	switch v.kind {
	case vUint:
		return int64(min(v.u, math.MaxInt64))
	case vInt:
		return int64(v.u)
	case vFloat:
		return int64(math.Max(math.Min(v.f, math.MaxInt64), math.MinInt64))
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

// CounterChange is a counter's change from prev to cur. A counter that
// went backwards was reset (CPU hotplug, interface re-created), so the
// change is unknown and reported as zero rather than as a huge number.
func CounterChange(prev, cur Value) float64 {
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

type valueJSON struct {
	U *uint64  `json:"u,omitempty"`
	I *int64   `json:"i,omitempty"`
	F *float64 `json:"f,omitempty"`
	S *string  `json:"s,omitempty"`
}

// MarshalJSON encodes a value with its kind: {"u":1}, {"i":-1}, {"f":1.5},
// {"s":"x"}, or null for no value.
func (v Value) MarshalJSON() ([]byte, error) {
	var j valueJSON
	switch v.kind {
	case vNone:
		return []byte("null"), nil
	case vUint:
		j.U = &v.u
	case vInt:
		i := int64(v.u)
		j.I = &i
	case vFloat:
		j.F = &v.f
	case vText:
		j.S = &v.s
	}
	return json.Marshal(j)
}

// UnmarshalJSON decodes what MarshalJSON wrote.
func (v *Value) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*v = NoValue
		return nil
	}
	var j valueJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	switch {
	case j.U != nil:
		*v = Uint(*j.U)
	case j.I != nil:
		*v = Int(*j.I)
	case j.F != nil:
		*v = Float(*j.F)
	case j.S != nil:
		*v = Text(*j.S)
	default:
		return fmt.Errorf("value %s has no u, i, f or s field", b)
	}
	return nil
}
