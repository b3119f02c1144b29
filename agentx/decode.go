package agentx

import (
	"github.com/perfagent/subagent/asn1tree"
)

// decoder reads one PDU body. Every length is checked against the bytes
// actually present before anything is allocated; the first error sticks.
type decoder struct {
	b     []byte
	off   int
	big   bool
	err   error
	arena []uint32 // backing store for decoded OIDs, reused between PDUs
}

func (d *decoder) need(n int, what string) bool {
	if d.err != nil {
		return false
	}
	if n < 0 || len(d.b)-d.off < n {
		d.err = errParse("%s needs %d bytes at offset %d, only %d left", what, n, d.off, len(d.b)-d.off)
		return false
	}
	return true
}

func (d *decoder) u8(what string) uint8 {
	if !d.need(1, what) {
		return 0
	}
	d.off++
	return d.b[d.off-1]
}

func (d *decoder) u16(what string) uint16 {
	if !d.need(2, what) {
		return 0
	}
	d.off += 2
	return getU16(d.b[d.off-2:], d.big)
}

func (d *decoder) u32(what string) uint32 {
	if !d.need(4, what) {
		return 0
	}
	d.off += 4
	return getU32(d.b[d.off-4:], d.big)
}

func (d *decoder) u64(what string) uint64 {
	a, b := d.u32(what), d.u32(what)
	if d.big {
		return uint64(a)<<32 | uint64(b)
	}
	return uint64(b)<<32 | uint64(a)
}

func (d *decoder) skip(n int, what string) {
	if d.need(n, what) {
		d.off += n
	}
}

// alloc carves n sub-identifiers out of the arena.
func (d *decoder) alloc(n int) asn1tree.OID {
	if cap(d.arena)-len(d.arena) < n {
		d.arena = make([]uint32, 0, max(n, 2*cap(d.arena), 64))
	}
	l := len(d.arena)
	d.arena = d.arena[:l+n]
	return asn1tree.OID(d.arena[l : l+n : l+n])
}

// oid reads an Object Identifier, expanding a non-zero prefix byte to
// 1.3.6.1.prefix. The null OID decodes as nil.
func (d *decoder) oid(what string) (asn1tree.OID, bool) {
	if !d.need(4, what) {
		return nil, false
	}
	n, prefix, include := int(d.b[d.off]), d.b[d.off+1], d.b[d.off+2] != 0
	d.off += 4
	total := n
	if prefix != 0 {
		total += 5
	}
	if total > asn1tree.MaxLen {
		d.err = errParse("%s has %d sub-identifiers, at most %d allowed", what, total, asn1tree.MaxLen)
		return nil, false
	}
	if total == 0 || !d.need(4*n, what) {
		return nil, include
	}
	o := d.alloc(total)
	subs := o
	if prefix != 0 {
		copy(o, internetPrefix[:])
		o[4] = uint32(prefix)
		subs = o[5:]
	}
	for i := range subs {
		subs[i] = getU32(d.b[d.off:], d.big)
		d.off += 4
	}
	return o, include
}

// octets reads a padded Octet String.
func (d *decoder) octets(what string) string {
	n := d.u32(what + " length")
	if d.err != nil {
		return ""
	}
	if uint64(n) > uint64(len(d.b)-d.off) {
		d.err = errParse("%s of %d bytes at offset %d, only %d left", what, n, d.off, len(d.b)-d.off)
		return ""
	}
	padded := (int(n) + 3) &^ 3
	if !d.need(padded, what) {
		return ""
	}
	s := string(d.b[d.off : d.off+int(n)])
	d.off += padded
	return s
}

func (d *decoder) varbind(v *varbind) {
	v.typ = vbType(d.u16("v.type"))
	d.skip(2, "v.type reserved")
	v.name, _ = d.oid("v.name")
	v.num, v.str, v.oid = 0, "", nil
	switch v.typ {
	case vbInteger:
		v.num = uint64(int64(int32(d.u32("Integer"))))
	case vbCounter32, vbGauge32, vbTimeTicks:
		v.num = uint64(d.u32(v.typ.String()))
	case vbCounter64:
		v.num = d.u64("Counter64")
	case vbOctetString, vbOpaque, vbIPAddress:
		v.str = d.octets(v.typ.String())
	case vbOID:
		v.oid, _ = d.oid("OID value")
	case vbNull, vbNoSuchObject, vbNoSuchInstance, vbEndOfMibView:
	default:
		if d.err == nil {
			d.err = errParse("unknown VarBind type %d", uint16(v.typ))
		}
	}
}

// varbinds reads VarBinds up to the end of the body into dst.
func (d *decoder) varbinds(dst []varbind) []varbind {
	dst = dst[:0]
	for d.err == nil && d.off < len(d.b) {
		if len(dst) == maxVarBinds {
			d.err = errParse("more than %d VarBinds", maxVarBinds)
			break
		}
		dst = append(dst, varbind{})
		d.varbind(&dst[len(dst)-1])
	}
	return dst
}

// decodePacket decodes one whole PDU (header and payload).
func decodePacket(b []byte) (*packet, error) {
	h, err := decodeHeader(b)
	if err != nil {
		return nil, err
	}
	if uint64(h.payloadLen) != uint64(len(b)-headerLen) {
		return nil, errParse("h.payload_length %d but %d payload bytes", h.payloadLen, len(b)-headerLen)
	}
	p := &packet{header: h}
	var d decoder
	return p, d.body(p, b[headerLen:])
}

// body decodes the payload of p, whose header is already set. Slices in p
// are reused; OIDs come from d's arena.
func (d *decoder) body(p *packet, b []byte) error {
	d.b, d.off, d.big, d.err = b, 0, p.bigEndian(), nil
	d.arena = d.arena[:0] // the previous PDU's OIDs are dead by now
	hdr := p.header
	*p = packet{header: hdr, ranges: p.ranges[:0], varbinds: p.varbinds[:0]}
	if p.flags&flagNonDefaultContext != 0 && p.typ.hasContext() {
		p.context = d.octets("context")
	}
	switch p.typ {
	case typeOpen:
		p.timeout = d.u8("o.timeout")
		d.skip(3, "o.timeout reserved")
		p.id, _ = d.oid("o.id")
		p.descr = d.octets("o.descr")
	case typeClose:
		p.reason = closeReason(d.u8("c.reason"))
		d.skip(3, "c.reason reserved")
	case typeRegister, typeUnregister:
		p.timeout = d.u8("r.timeout")
		p.priority = d.u8("r.priority")
		p.rangeSubID = d.u8("r.range_subid")
		d.skip(1, "r.range_subid reserved")
		p.subtree, _ = d.oid("r.subtree")
		if p.typ == typeUnregister {
			p.timeout = 0
		}
		if p.rangeSubID != 0 {
			if d.err == nil && int(p.rangeSubID) > len(p.subtree) {
				d.err = errParse("r.range_subid %d beyond the %d sub-identifiers of r.subtree", p.rangeSubID, len(p.subtree))
			}
			p.upperBound = d.u32("r.upper_bound")
		}
	case typeGetBulk:
		p.nonRepeaters = d.u16("g.non_repeaters")
		p.maxRepetitions = d.u16("g.max_repetitions")
		fallthrough
	case typeGet, typeGetNext:
		for d.err == nil && d.off < len(d.b) {
			if len(p.ranges) == maxVarBinds {
				d.err = errParse("more than %d SearchRanges", maxVarBinds)
				break
			}
			var r searchRange
			r.start, r.include = d.oid("SearchRange start")
			r.end, _ = d.oid("SearchRange end")
			p.ranges = append(p.ranges, r)
		}
	case typeTestSet, typeNotify, typeIndexAllocate, typeIndexDeallocate:
		p.varbinds = d.varbinds(p.varbinds)
	case typeCommitSet, typeUndoSet, typeCleanupSet, typePing:
	case typeAddAgentCaps:
		p.id, _ = d.oid("a.id")
		p.descr = d.octets("a.descr")
	case typeRemoveAgentCaps:
		p.id, _ = d.oid("a.id")
	case typeResponse:
		p.sysUpTime = d.u32("res.sysUpTime")
		p.resError = ErrorCode(d.u16("res.error"))
		p.resIndex = d.u16("res.index")
		p.varbinds = d.varbinds(p.varbinds)
	default:
		return errParse("unknown PDU type %d", uint8(p.typ))
	}
	if d.err == nil && d.off != len(d.b) {
		d.err = errParse("%d bytes after the %s PDU", len(d.b)-d.off, p.typ)
	}
	return d.err
}
