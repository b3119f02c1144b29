package responder

import (
	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/asn1tree"
)

// lenLen is the size of a BER definite length.
func lenLen(n int) int {
	switch {
	case n < 0x80:
		return 1
	case n < 0x100:
		return 2
	case n < 0x10000:
		return 3
	case n < 0x1000000:
		return 4
	}
	return 5
}

func appendLen(b []byte, n int) []byte {
	l := lenLen(n)
	if l == 1 {
		return append(b, byte(n))
	}
	return appendBE(append(b, 0x80|byte(l-1)), uint64(n), l-1)
}

// intLen is the size of x as a minimal two's complement INTEGER.
func intLen(x int64) int {
	n := 1
	for x > 127 || x < -128 {
		x >>= 8
		n++
	}
	return n
}

// uintLen is the size of an unsigned value (a leading zero octet when the
// top bit is set, as BER integers are signed).
func uintLen(x uint64) int {
	n := 1
	for x > 127 {
		x >>= 8
		n++
	}
	return n
}

// appendBE appends the n low octets of x, most significant first; for n 9
// the first octet is the zero sign octet (x>>64 is 0 in Go).
func appendBE(b []byte, x uint64, n int) []byte {
	for i := n - 1; i >= 0; i-- {
		b = append(b, byte(x>>(8*uint(i))))
	}
	return b
}

func appendInt(b []byte, tag byte, x int64) []byte {
	n := intLen(x)
	return appendBE(append(b, tag, byte(n)), uint64(x), n)
}

// base128Len is the size of one OID subidentifier.
func base128Len(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

func appendBase128(b []byte, x uint64) []byte {
	for i := base128Len(x) - 1; i > 0; i-- {
		b = append(b, byte(x>>(7*uint(i)))|0x80)
	}
	return append(b, byte(x&0x7f))
}

// oidLen is the size of o's contents, or -1 when BER cannot encode o
// (fewer than two arcs, first arc above 2, second above 39 under 0 or 1).
func oidLen(o asn1tree.OID) int {
	if len(o) < 2 || o[0] > 2 || (o[0] < 2 && o[1] > 39) {
		return -1
	}
	n := base128Len(uint64(o[0])*40 + uint64(o[1]))
	for _, x := range o[2:] {
		n += base128Len(uint64(x))
	}
	return n
}

func appendOIDContents(b []byte, o asn1tree.OID) []byte {
	b = appendBase128(b, uint64(o[0])*40+uint64(o[1]))
	for _, x := range o[2:] {
		b = appendBase128(b, uint64(x))
	}
	return b
}

// valueTag and valueLen give a value's BER tag and contents size; ok is
// false for a kind SNMP cannot carry (NoValue) or an unencodable OID.
func valueTag(v *asn1tree.Value) (tag byte, n int, ok bool) {
	switch v.Kind {
	case asn1tree.Integer32:
		return byte(gosnmp.Integer), intLen(int64(int32(v.Num))), true
	case asn1tree.Gauge32:
		return byte(gosnmp.Gauge32), uintLen(uint64(uint32(v.Num))), true
	case asn1tree.Counter32:
		return byte(gosnmp.Counter32), uintLen(uint64(uint32(v.Num))), true
	case asn1tree.TimeTicks:
		return byte(gosnmp.TimeTicks), uintLen(uint64(uint32(v.Num))), true
	case asn1tree.Counter64:
		return byte(gosnmp.Counter64), uintLen(v.Num), true
	case asn1tree.OctetString:
		return byte(gosnmp.OctetString), len(v.Str), true
	case asn1tree.ObjectIdentifier:
		n := oidLen(v.OID)
		return byte(gosnmp.ObjectIdentifier), n, n >= 0
	}
	return 0, 0, false
}

// appendVarBind appends SEQUENCE { name, value }; false when v cannot be
// encoded (b is then unchanged).
func appendVarBind(b []byte, name asn1tree.OID, v *asn1tree.Value) ([]byte, bool) {
	tag, n, ok := valueTag(v)
	nl := oidLen(name)
	if !ok || nl < 0 {
		return b, false
	}
	content := 1 + lenLen(nl) + nl + 1 + lenLen(n) + n
	b = appendLen(append(b, byte(gosnmp.Sequence)), content)
	b = appendOIDContents(appendLen(append(b, byte(gosnmp.ObjectIdentifier)), nl), name)
	b = appendLen(append(b, tag), n)
	switch v.Kind {
	case asn1tree.Integer32:
		return appendBE(b, uint64(int64(int32(v.Num))), n), true
	case asn1tree.Gauge32, asn1tree.Counter32, asn1tree.TimeTicks:
		return appendBE(b, uint64(uint32(v.Num)), n), true
	case asn1tree.Counter64:
		return appendBE(b, v.Num, n), true
	case asn1tree.OctetString:
		return append(b, v.Str...), true
	}
	return appendOIDContents(b, v.OID), true
}

// appendException appends a varbind with a v2c exception value
// (noSuchObject, noSuchInstance, endOfMibView). name comes from a decoded
// request or the tree's successor of one, so it is always encodable.
func appendException(b []byte, name asn1tree.OID, tag gosnmp.Asn1BER) []byte {
	nl := oidLen(name)
	b = appendLen(append(b, byte(gosnmp.Sequence)), 1+lenLen(nl)+nl+2)
	b = appendOIDContents(appendLen(append(b, byte(gosnmp.ObjectIdentifier)), nl), name)
	return append(b, byte(tag), 0)
}
