package spmi

import (
	"encoding/json"
	"fmt"
)

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
