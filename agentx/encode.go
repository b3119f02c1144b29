package agentx

import (
	"errors"
	"fmt"

	"github.com/perfagent/subagent/asn1tree"
)

// internetPrefix is 1.3.6.1, the prefix AgentX compresses into one byte.
var internetPrefix = [4]uint32{1, 3, 6, 1}

var errPayloadTooBig = errors.New("agentx: PDU payload larger than 64 KiB")

// encoder appends one PDU to b; the first error sticks.
type encoder struct {
	b   []byte
	big bool
	err error
}

func (e *encoder) u8s(v ...byte)  { e.b = append(e.b, v...) }
func (e *encoder) u16(v uint16)   { e.b = putU16(e.b, v, e.big) }
func (e *encoder) u32(v uint32)   { e.b = putU32(e.b, v, e.big) }
func (e *encoder) u64(v uint64)   { e.u32Pair(uint32(v>>32), uint32(v)) }
func (e *encoder) fail(err error) { e.err = cmpOr(e.err, err) }
func (e *encoder) bool8(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// u32Pair writes a 64-bit value as high then low word in network order,
// low then high otherwise: the 8 bytes are the value in the PDU's order.
func (e *encoder) u32Pair(hi, lo uint32) {
	if e.big {
		e.u32(hi)
		e.u32(lo)
	} else {
		e.u32(lo)
		e.u32(hi)
	}
}

// oid writes an Object Identifier, compressing a 1.3.6.1.X prefix (X in
// 1..255) into the prefix byte as RFC 2741 section 5.1 allows.
func (e *encoder) oid(o asn1tree.OID, include bool) {
	if len(o) > asn1tree.MaxLen {
		e.fail(fmt.Errorf("agentx: OID of %d sub-identifiers, at most %d allowed", len(o), asn1tree.MaxLen))
		return
	}
	prefix, subs := uint32(0), o
	if len(o) >= 5 && [4]uint32(o[:4]) == internetPrefix && o[4] != 0 && o[4] <= 255 {
		prefix, subs = o[4], o[5:]
	}
	e.u8s(byte(len(subs)), byte(prefix), e.bool8(include), 0)
	for _, s := range subs {
		e.u32(s)
	}
}

// octets writes an Octet String padded to a multiple of 4 bytes.
func (e *encoder) octets(s string) {
	if len(s) > maxPayload {
		e.fail(errPayloadTooBig)
		return
	}
	e.u32(uint32(len(s)))
	e.b = append(e.b, s...)
	for n := len(s); n%4 != 0; n++ {
		e.b = append(e.b, 0)
	}
}

func (e *encoder) varbind(v *varbind) {
	e.u16(uint16(v.typ))
	e.u16(0)
	e.oid(v.name, false)
	switch v.typ {
	case vbInteger, vbCounter32, vbGauge32, vbTimeTicks:
		e.u32(uint32(v.num))
	case vbCounter64:
		e.u64(v.num)
	case vbOctetString, vbOpaque, vbIPAddress:
		e.octets(v.str)
	case vbOID:
		e.oid(v.oid, false)
	case vbNull, vbNoSuchObject, vbNoSuchInstance, vbEndOfMibView:
	default:
		e.fail(fmt.Errorf("agentx: cannot encode VarBind type %d", uint16(v.typ)))
	}
}

func (e *encoder) varbinds(vbs []varbind) {
	if len(vbs) > maxVarBinds {
		e.fail(fmt.Errorf("agentx: %d VarBinds, at most %d allowed", len(vbs), maxVarBinds))
	}
	for i := range vbs {
		e.varbind(&vbs[i])
	}
}

// appendPacket appends the encoding of p to b.
func appendPacket(b []byte, p *packet) ([]byte, error) {
	start := len(b)
	e := encoder{b: appendHeader(b, &p.header), big: p.bigEndian()}
	if p.flags&flagNonDefaultContext != 0 && p.typ.hasContext() {
		e.octets(p.context)
	}
	switch p.typ {
	case typeOpen:
		e.u8s(p.timeout, 0, 0, 0)
		e.oid(p.id, false)
		e.octets(p.descr)
	case typeClose:
		e.u8s(byte(p.reason), 0, 0, 0)
	case typeRegister, typeUnregister:
		timeout := p.timeout
		if p.typ == typeUnregister {
			timeout = 0 // reserved in Unregister
		}
		if int(p.rangeSubID) > len(p.subtree) {
			e.fail(fmt.Errorf("agentx: range_subid %d beyond the %d sub-identifiers of %s", p.rangeSubID, len(p.subtree), p.subtree))
		}
		e.u8s(timeout, p.priority, p.rangeSubID, 0)
		e.oid(p.subtree, false)
		if p.rangeSubID != 0 {
			e.u32(p.upperBound)
		}
	case typeGetBulk:
		e.u16(p.nonRepeaters)
		e.u16(p.maxRepetitions)
		fallthrough
	case typeGet, typeGetNext:
		if len(p.ranges) > maxVarBinds {
			e.fail(fmt.Errorf("agentx: %d SearchRanges, at most %d allowed", len(p.ranges), maxVarBinds))
		}
		for i := range p.ranges {
			e.oid(p.ranges[i].start, p.ranges[i].include)
			e.oid(p.ranges[i].end, false)
		}
	case typeTestSet, typeNotify, typeIndexAllocate, typeIndexDeallocate:
		e.varbinds(p.varbinds)
	case typeCommitSet, typeUndoSet, typeCleanupSet, typePing:
	case typeAddAgentCaps:
		e.oid(p.id, false)
		e.octets(p.descr)
	case typeRemoveAgentCaps:
		e.oid(p.id, false)
	case typeResponse:
		e.u32(p.sysUpTime)
		e.u16(uint16(p.resError))
		e.u16(p.resIndex)
		e.varbinds(p.varbinds)
	default:
		e.fail(fmt.Errorf("agentx: cannot encode PDU type %d", uint8(p.typ)))
	}
	payload := len(e.b) - start - headerLen
	if payload > maxPayload {
		e.fail(errPayloadTooBig)
	}
	if e.err != nil {
		return b, e.err
	}
	setU32(e.b[start+16:], uint32(payload), e.big)
	return e.b, nil
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
