package asn1tree

import "fmt"

// Kind is the SNMP type a value is served as (RFC 2578 / RFC 3416 SMIv2 types).
type Kind uint8

// The kinds the tree serves. NoValue marks a statistic whose source could not
// be read (SPMI's SiNoValue): Get answers noSuchInstance and walks skip it.
const (
	NoValue Kind = iota
	Integer32
	Gauge32
	Counter32
	Counter64
	OctetString
	TimeTicks
	ObjectIdentifier
)

var kindNames = [...]string{"NoValue", "Integer32", "Gauge32", "Counter32", "Counter64", "OctetString", "TimeTicks", "ObjectIdentifier"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Value is one SNMP-typed value. Num carries every numeric kind (Integer32 as
// its two's complement in the low 32 bits sign-extended to 64); Str carries
// OctetString; OID carries ObjectIdentifier.
type Value struct {
	Kind Kind
	Num  uint64
	Str  string
	OID  OID
}

// Int returns an Integer32 value.
func Int(v int32) Value { return Value{Kind: Integer32, Num: uint64(int64(v))} }

// Gauge returns a Gauge32 value.
func Gauge(v uint32) Value { return Value{Kind: Gauge32, Num: uint64(v)} }

// Counter returns a Counter64 value.
func Counter(v uint64) Value { return Value{Kind: Counter64, Num: v} }

// Str returns an OctetString value.
func Str(s string) Value { return Value{Kind: OctetString, Str: s} }

// Signed returns the value of an Integer32 as a signed number.
func (v Value) Signed() int64 { return int64(v.Num) }

// String formats the value for people and logs.
func (v Value) String() string {
	switch v.Kind {
	case NoValue:
		return "(no value)"
	case Integer32:
		return fmt.Sprint(int64(v.Num))
	case OctetString:
		return fmt.Sprintf("%q", v.Str)
	case ObjectIdentifier:
		return v.OID.String()
	}
	return fmt.Sprint(v.Num)
}
