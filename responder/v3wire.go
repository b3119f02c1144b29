package responder

import (
	"encoding/binary"
	"sync/atomic"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/usm"
)

// tlvLen is the size of a BER element with n octets of contents.
func tlvLen(n int) int { return 1 + lenLen(n) + n }

// intTLV is the size of an INTEGER element holding x.
func intTLV(x int64) int { return 2 + intLen(x) }

// v3Overhead bounds what a v3 response adds around its PDU: the header,
// the USM parameters with the longest digest, the scopedPDU and the
// encryption's OCTET STRING.
func v3Overhead(e *engine, m *v3msg, u *user) int {
	return v3Fixed + 2*len(e.id) + len(m.user)
}

// v3Fixed is v3Overhead without the engine ID and user name.
const v3Fixed = 96 + 48

// MaxV3Overhead is v3Overhead at its largest: an engine ID and a user
// name of 32 octets, the most Config accepts (RFC 3411, 3414). A PDU of
// MaxMsgSize - MaxV3Overhead octets is answered to any v3 user.
const MaxV3Overhead = v3Fixed + 2*32 + 32

// report counts a failure and answers it with a Report PDU carrying the
// counter (RFC 3412 7.1.3b, RFC 3414 3.2): at noAuthNoPriv, but signed
// with u's key when u is given (notInTimeWindow, so the manager learns
// the time from a message it can trust). Only reportable messages get one.
func (r *Responder) report(s *scratch, set *settings, c *atomic.Uint64, oid asn1tree.OID, u *user, why error) []byte {
	n := c.Add(1)
	s.why = why
	m := &s.m
	if !m.reportable() {
		return nil
	}
	var id int32 // 0 when the request's PDU was encrypted
	if m.dataTag == byte(gosnmp.Sequence) {
		id = plainRequestID(m.data)
	}
	v := asn1tree.Value{Kind: asn1tree.Counter32, Num: uint64(uint32(n))}
	s.vb, _ = appendVarBind(s.vb[:0], oid, &v)
	pdu := 3*2 + intLen(int64(id)) + 2 + tlvLen(len(s.vb))
	b := appendLen(append(s.rep[:0], byte(gosnmp.Report)), pdu)
	b = appendInt(b, byte(gosnmp.Integer), int64(id))
	b = appendInt(b, byte(gosnmp.Integer), 0)
	b = appendInt(b, byte(gosnmp.Integer), 0)
	b = appendLen(append(b, byte(gosnmp.Sequence)), len(s.vb))
	s.rep = append(b, s.vb...)
	level := NoAuthNoPriv
	if u != nil {
		level = AuthNoPriv
	}
	r.stats.OutReports.Add(1)
	return r.wrapV3(s, level, u, s.rep, min(int(m.maxSize), set.maxMsgSize))
}

// refuse is report (at noAuthNoPriv) for a failure throttled per source
// (usm.Throttle): always counted, answered only within lim.
func (r *Responder) refuse(s *scratch, set *settings, lim *usm.Throttle, c *atomic.Uint64, oid asn1tree.OID, why error) []byte {
	if !lim.Fail(s.from.Addr(), r.now()) {
		c.Add(1)
		r.stats.Throttled.Add(1)
		s.why = errThrottled
		return nil
	}
	return r.report(s, set, c, oid, nil, why)
}

// plainRequestID is the request-id of a plaintext scopedPDU, 0 when it
// cannot be read.
func plainRequestID(scoped []byte) int32 {
	_, b, ok := octets(scoped, 32)
	if ok {
		_, b, ok = octets(b, 32)
	}
	if !ok {
		return 0
	}
	_, pdu, _, ok := tlv(b)
	if !ok {
		return 0
	}
	tag, v, _, ok := tlv(pdu)
	if !ok || tag != byte(gosnmp.Integer) {
		return 0
	}
	id, _ := parseInt32(v)
	return id
}

// wrapV3 makes the v3 message around pdu (a Response or Report) for the
// request in s.m: the user and msgID echoed, this engine's ID, boots and
// time, encrypted and signed as level says. nil when it exceeds limit.
func (r *Responder) wrapV3(s *scratch, level Level, u *user, pdu []byte, limit int) []byte {
	e, m := r.engine, &s.m
	boots, now := e.boots, r.engineTime()
	sc := appendLen(append(s.plain[:0], byte(gosnmp.Sequence)), tlvLen(len(e.id))+2+len(pdu))
	sc = append(appendLen(append(sc, byte(gosnmp.OctetString)), len(e.id)), e.id...)
	sc = append(sc, byte(gosnmp.OctetString), 0) // contextName ""
	sc = append(sc, pdu...)
	s.plain = sc
	var salt [8]byte
	authLen, privLen := 0, 0
	if level&1 != 0 {
		authLen = u.Keys.Auth.Trunc
	}
	if level&2 != 0 {
		binary.BigEndian.PutUint64(salt[:], e.salt.Add(1))
		cfb(s.aesOf(u), aesIV(&s.iv, boots, now, salt[:]), sc, false)
		privLen = 8
	}
	usmLen := tlvLen(len(e.id)) + intTLV(int64(boots)) + intTLV(int64(now)) + tlvLen(len(m.user)) +
		tlvLen(authLen) + tlvLen(privLen)
	gdLen := intTLV(int64(m.id)) + intTLV(MaxMsgSizeCap) + 3 + 3
	dataLen := len(sc)
	if privLen > 0 {
		dataLen = tlvLen(len(sc))
	}
	body := 3 + tlvLen(gdLen) + tlvLen(tlvLen(usmLen)) + dataLen
	if tlvLen(body) > limit {
		r.stats.SilentDrops.Add(1)
		s.why = errTooBigToAnswer
		return nil
	}
	b := appendLen(append(s.out[:0], byte(gosnmp.Sequence)), body)
	b = appendInt(b, byte(gosnmp.Integer), 3)
	b = appendLen(append(b, byte(gosnmp.Sequence)), gdLen)
	b = appendInt(b, byte(gosnmp.Integer), int64(m.id))
	b = appendInt(b, byte(gosnmp.Integer), MaxMsgSizeCap)
	b = append(b, byte(gosnmp.OctetString), 1, byte(level))
	b = appendInt(b, byte(gosnmp.Integer), 3)
	b = appendLen(append(b, byte(gosnmp.OctetString)), tlvLen(usmLen))
	b = appendLen(append(b, byte(gosnmp.Sequence)), usmLen)
	b = append(appendLen(append(b, byte(gosnmp.OctetString)), len(e.id)), e.id...)
	b = appendInt(b, byte(gosnmp.Integer), int64(boots))
	b = appendInt(b, byte(gosnmp.Integer), int64(now))
	b = append(appendLen(append(b, byte(gosnmp.OctetString)), len(m.user)), m.user...)
	b = appendLen(append(b, byte(gosnmp.OctetString)), authLen)
	off := len(b)
	b = append(b, make([]byte, authLen)...)
	b = append(appendLen(append(b, byte(gosnmp.OctetString)), privLen), salt[:privLen]...)
	if privLen > 0 {
		b = appendLen(append(b, byte(gosnmp.OctetString)), len(sc))
	}
	b = append(b, sc...)
	s.out = b
	if authLen > 0 {
		mac := s.hmacOf(u)
		mac.Write(b)
		s.sum = mac.Sum(s.sum[:0])
		copy(b[off:off+authLen], s.sum)
	}
	return b
}
