package responder

import (
	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/asn1tree"
)

// validValue checks a request varbind's value against the SNMP value
// syntaxes (RFC 3416 ObjectSyntax and the exceptions), as error responses
// echo values and must not carry anything a manager cannot decode.
func validValue(tag byte, v []byte) bool {
	switch gosnmp.Asn1BER(tag) {
	case gosnmp.Null, gosnmp.NoSuchObject, gosnmp.NoSuchInstance, gosnmp.EndOfMibView:
		return len(v) == 0
	case gosnmp.Integer:
		_, ok := parseInt32(v)
		return ok
	case gosnmp.OctetString:
		return true
	case gosnmp.ObjectIdentifier:
		var arcs [asn1MaxArcs]uint32
		_, ok := appendOID(arcs[:0], v)
		return ok
	case gosnmp.IPAddress:
		return len(v) == 4
	case gosnmp.Counter32, gosnmp.Gauge32, gosnmp.TimeTicks:
		return unsignedOK(v, 4)
	case gosnmp.Counter64:
		return unsignedOK(v, 8)
	case gosnmp.Opaque:
		return opaqueOK(v)
	}
	return false
}

// asn1MaxArcs is the most arcs appendOID writes before it gives up.
const asn1MaxArcs = asn1tree.MaxLen + 2

// unsignedOK: a non-negative INTEGER of at most size octets, plus a
// leading zero octet.
func unsignedOK(v []byte, size int) bool {
	if len(v) == 0 || v[0]&0x80 != 0 {
		return false
	}
	return len(v) <= size || (len(v) == size+1 && v[0] == 0)
}

// opaqueOK: an Opaque wrapping net-snmp's float or double extension
// (9f 78 04 ..., 9f 79 08 ...) must be whole, as managers decode those.
func opaqueOK(v []byte) bool {
	if len(v) < 2 || v[0] != byte(gosnmp.AsnExtensionTag) {
		return true
	}
	switch gosnmp.Asn1BER(v[1]) {
	case gosnmp.OpaqueFloat:
		return len(v) == 7 && v[2] == 4
	case gosnmp.OpaqueDouble:
		return len(v) == 11 && v[2] == 8
	}
	return true
}
