package responder

import (
	"errors"
	"math"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/asn1tree"
)

// Why a request is dropped; constant errors so dropping allocates nothing.
var (
	errParse      = errors.New("malformed message")
	errVersion    = errors.New("SNMP version not 1 or 2c")
	errNotRequest = errors.New("PDU is not a request")
	errCommunity  = errors.New("wrong community")
)

// request is one decoded message. Its slices point into the packet and the
// decoder's arena: valid until the next decode with the same scratch.
type request struct {
	version   int    // 0 for v1, 1 for v2c, 3 for v3
	v3        []byte // v3: the message after msgVersion
	community []byte
	pduType   gosnmp.PDUType
	id        int32
	a, b      int32          // error-status and -index, or non-repeaters and max-repetitions
	vbl       []byte         // varbind list contents, echoed by error responses
	names     []asn1tree.OID // varbind names
	arena     []uint32       // holds the names
	ends      []int          // end of each name in arena
}

// tlv splits off the first BER element of b: its tag, its contents, what
// follows. Only definite lengths of up to 4 octets are valid.
func tlv(b []byte) (tag byte, val, rest []byte, ok bool) {
	if len(b) < 2 || b[0]&0x1f == 0x1f { // SNMP has no multi-octet tags
		return 0, nil, nil, false
	}
	n, i := int(b[1]), 2
	if n&0x80 != 0 {
		k := n & 0x7f
		if k == 0 || k > 4 || len(b) < 2+k {
			return 0, nil, nil, false
		}
		n = 0
		for _, c := range b[2 : 2+k] {
			n = n<<8 | int(c)
		}
		i += k
	}
	if n < 0 || n > len(b)-i { // n < 0: overflow where int has 32 bits
		return 0, nil, nil, false
	}
	return b[0], b[i : i+n], b[i+n:], true
}

// parseInt32 reads an INTEGER's contents; SNMP's header integers are 32-bit.
func parseInt32(v []byte) (int32, bool) {
	if len(v) == 0 || len(v) > 4 {
		return 0, false
	}
	x := int32(int8(v[0]))
	for _, c := range v[1:] {
		x = x<<8 | int32(c)
	}
	return x, true
}

// appendOID decodes an OBJECT IDENTIFIER's contents onto dst.
func appendOID(dst []uint32, v []byte) ([]uint32, bool) {
	if len(v) == 0 || v[len(v)-1]&0x80 != 0 {
		return dst, false
	}
	start := len(dst)
	var x uint64
	for _, c := range v {
		if x == 0 && c == 0x80 { // X.690 8.19.2: no leading 0x80 octets
			return dst, false
		}
		x = x<<7 | uint64(c&0x7f)
		if x > math.MaxUint32+80 {
			return dst, false
		}
		if c&0x80 != 0 {
			continue
		}
		switch {
		case len(dst) > start:
			if x > math.MaxUint32 {
				return dst, false
			}
			dst = append(dst, uint32(x))
		case x < 80: // the first subidentifier holds two arcs
			dst = append(dst, uint32(x/40), uint32(x%40))
		default:
			dst = append(dst, 2, uint32(x-80))
		}
		if len(dst)-start > asn1tree.MaxLen {
			return dst, false
		}
		x = 0
	}
	return dst, true
}

// decode parses a v1 or v2c message into q. A v3 message gives
// errVersion with q.version 3 and q.v3 set.
func (q *request) decode(pkt []byte) error {
	q.v3, q.version = nil, -1 // not the previous message's
	tag, msg, rest, ok := tlv(pkt)
	if !ok || tag != byte(gosnmp.Sequence) || len(rest) != 0 {
		return errParse
	}
	tag, v, msg, ok := tlv(msg)
	if !ok || tag != byte(gosnmp.Integer) {
		return errParse
	}
	ver, ok := parseInt32(v)
	if !ok || (ver != int32(gosnmp.Version1) && ver != int32(gosnmp.Version2c)) {
		if ok && ver == int32(gosnmp.Version3) {
			q.version = int(ver)
			q.v3 = msg // handled by the v3 path (v3.go)
		}
		return errVersion
	}
	q.version = int(ver)
	tag, q.community, msg, ok = tlv(msg)
	if !ok || tag != byte(gosnmp.OctetString) {
		return errParse
	}
	tag, pdu, msg, ok := tlv(msg)
	if !ok || len(msg) != 0 {
		return errParse
	}
	return q.decodePDU(tag, pdu)
}

// decodePDU reads a PDU of the version in q.version (v3 carries v2c's).
func (q *request) decodePDU(tag byte, pdu []byte) error {
	var ok bool
	var v []byte
	q.pduType = gosnmp.PDUType(tag)
	switch q.pduType {
	case gosnmp.GetRequest, gosnmp.GetNextRequest, gosnmp.SetRequest:
	case gosnmp.GetBulkRequest:
		if q.version == int(gosnmp.Version1) {
			return errParse // SNMPv1 has no GetBulk PDU
		}
	case gosnmp.GetResponse, gosnmp.Trap, gosnmp.InformRequest, gosnmp.SNMPv2Trap, gosnmp.Report:
		return errNotRequest
	default:
		return errParse
	}
	var ints [3]int32
	for i := range ints {
		if tag, v, pdu, ok = tlv(pdu); !ok || tag != byte(gosnmp.Integer) {
			return errParse
		}
		if ints[i], ok = parseInt32(v); !ok {
			return errParse
		}
	}
	q.id, q.a, q.b = ints[0], ints[1], ints[2]
	if tag, q.vbl, pdu, ok = tlv(pdu); !ok || tag != byte(gosnmp.Sequence) || len(pdu) != 0 {
		return errParse
	}
	return q.decodeNames()
}

// decodeNames reads the varbind list's names; the values are not looked at.
func (q *request) decodeNames() error {
	q.arena, q.ends = q.arena[:0], q.ends[:0]
	for b := q.vbl; len(b) > 0; {
		tag, vb, rest, ok := tlv(b)
		if !ok || tag != byte(gosnmp.Sequence) {
			return errParse
		}
		b = rest
		tag, name, vb, ok := tlv(vb)
		if !ok || tag != byte(gosnmp.ObjectIdentifier) {
			return errParse
		}
		if q.arena, ok = appendOID(q.arena, name); !ok {
			return errParse
		}
		tag, val, vb, ok := tlv(vb)
		if !ok || len(vb) != 0 || !validValue(tag, val) {
			return errParse
		}
		q.ends = append(q.ends, len(q.arena))
	}
	// Slice the names only now: appending may have moved the arena.
	q.names = q.names[:0]
	start := 0
	for _, end := range q.ends {
		q.names = append(q.names, asn1tree.OID(q.arena[start:end:end]))
		start = end
	}
	return nil
}
