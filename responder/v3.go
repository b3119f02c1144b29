package responder

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"sync/atomic"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/usm"
)

// Why a v3 message is dropped or refused (RFC 3412 7.2, RFC 3414 3.2).
var (
	errSecModel      = errors.New("security model is not USM (3)")
	errInvalidMsg    = errors.New("msgFlags: privacy without authentication")
	errUnknownEngine = errors.New("unknown msgAuthoritativeEngineID")
	errUnknownUser   = errors.New("unknown user name")
	errSecLevel      = errors.New("security level not supported by the user")
	errWrongDigest   = errors.New("wrong digest")
	errNotInTime     = errors.New("not in time window")
	errDecrypt       = errors.New("privacy parameters are not 8 octets")
	errContext       = errors.New("unknown context")
	errContextEngine = errors.New("contextEngineID is not this engine's")
	errVersionOff    = errors.New("SNMPv1/v2c turned off (no community)")
	errThrottled     = errors.New("SNMPv3 failures of this source over its limit (snmp.throttle)")
)

// timeWindow is how far, in seconds, a message's time may be from the
// engine's (RFC 3414 3.2.7).
const timeWindow = 150

// usmStats and the other OIDs a Report carries.
var (
	usmStats                = asn1tree.OID{1, 3, 6, 1, 6, 3, 15, 1, 1}
	oidUnsupportedSecLevels = usmStats.Append(1, 0)
	oidNotInTimeWindows     = usmStats.Append(2, 0)
	oidUnknownUserNames     = usmStats.Append(3, 0)
	oidUnknownEngineIDs     = usmStats.Append(4, 0)
	oidWrongDigests         = usmStats.Append(5, 0)
	oidDecryptionErrors     = usmStats.Append(6, 0)
)

// engine is the SNMPv3 engine: fixed for the responder's life.
type engine struct {
	id    []byte
	idStr string // id as snmpEngineID's value: searches need not convert it
	boots uint32
	start time.Time     // V3.Start; zero: the responder's start
	salt  atomic.Uint64 // AES salt: random at start, +1 per message (RFC 3826 3.1.2.1)
}

func newEngine(v *V3) *engine {
	e := &engine{id: append([]byte(nil), v.EngineID...), idStr: string(v.EngineID), boots: v.Boots, start: v.Start}
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	e.salt.Store(binary.BigEndian.Uint64(b[:]))
	return e
}

// engineTime is snmpEngineTime: seconds since the engine's start (V3.Start,
// else New).
func (r *Responder) engineTime() uint32 {
	e := usm.Engine{Start: r.start}
	if r.engine != nil && !r.engine.start.IsZero() {
		e.Start = r.engine.start
	}
	return e.Time(r.now())
}

// sameEngine refuses an Update that would change the engine.
func (r *Responder) sameEngine(v *V3) error {
	switch {
	case v == nil && r.engine == nil:
		return nil
	case v == nil || r.engine == nil:
		return errors.New("turning SNMPv3 on or off needs a restart")
	case string(v.EngineID) != string(r.engine.id) || v.Boots != r.engine.boots:
		return errors.New("the SNMPv3 engine (id, boots) changes only with a restart")
	}
	return nil
}

// versions names what the responder answers, for the log.
func (r *Responder) versions() string {
	v := ""
	if r.live.Load().community != nil {
		v = "v1 v2c"
	}
	if r.engine != nil {
		v += " v3"
	}
	return v
}

// v3msg is a decoded v3 message's header; slices point into the packet.
type v3msg struct {
	id, maxSize int32
	flags       byte
	engineID    []byte
	boots, time int32
	user        []byte
	auth, priv  []byte // msgAuthenticationParameters, msgPrivacyParameters
	dataTag     byte   // Sequence: plaintext scopedPDU; OctetString: encrypted
	data        []byte
}

func (m *v3msg) level() Level     { return Level(m.flags & 3) }
func (m *v3msg) reportable() bool { return m.flags&4 != 0 }

// int32Field reads an INTEGER from b that must be from lo up.
func int32Field(b []byte, lo int32) (int32, []byte, bool) {
	tag, v, rest, ok := tlv(b)
	if !ok || tag != byte(gosnmp.Integer) {
		return 0, nil, false
	}
	x, ok := parseInt32(v)
	return x, rest, ok && x >= lo
}

// octets reads an OCTET STRING of at most n octets from b.
func octets(b []byte, n int) ([]byte, []byte, bool) {
	tag, v, rest, ok := tlv(b)
	return v, rest, ok && tag == byte(gosnmp.OctetString) && len(v) <= n
}

// parseV3 reads what follows msgVersion (RFC 3412 6, RFC 3414 2.4).
func (m *v3msg) parse(b []byte, st *Stats) error {
	*m = v3msg{}
	tag, gd, b, ok := tlv(b)
	if !ok || tag != byte(gosnmp.Sequence) {
		return errParse
	}
	var model int32
	var flags []byte
	if m.id, gd, ok = int32Field(gd, 0); !ok {
		return errParse
	}
	if m.maxSize, gd, ok = int32Field(gd, MinMsgSize); !ok {
		return errParse
	}
	if flags, gd, ok = octets(gd, 1); !ok || len(flags) != 1 {
		return errParse
	}
	if model, gd, ok = int32Field(gd, 1); !ok || len(gd) != 0 {
		return errParse
	}
	m.flags = flags[0]
	sp, b, ok := octets(b, 1024)
	if !ok {
		return errParse
	}
	if m.dataTag, m.data, b, ok = tlv(b); !ok || len(b) != 0 {
		return errParse
	}
	if model != 3 {
		st.UnknownSecurityModels.Add(1)
		return errSecModel
	}
	if m.flags&3 == 2 {
		st.InvalidMsgs.Add(1)
		return errInvalidMsg
	}
	if (m.level()&2 != 0) != (m.dataTag == byte(gosnmp.OctetString)) ||
		(m.dataTag != byte(gosnmp.OctetString) && m.dataTag != byte(gosnmp.Sequence)) {
		return errParse
	}
	if tag, sp, b, ok = tlv(sp); !ok || tag != byte(gosnmp.Sequence) || len(b) != 0 {
		return errParse
	}
	if m.engineID, sp, ok = octets(sp, 32); !ok {
		return errParse
	}
	if m.boots, sp, ok = int32Field(sp, 0); !ok {
		return errParse
	}
	if m.time, sp, ok = int32Field(sp, 0); !ok {
		return errParse
	}
	if m.user, sp, ok = octets(sp, 32); !ok {
		return errParse
	}
	if m.auth, sp, ok = octets(sp, 64); !ok {
		return errParse
	}
	if m.priv, sp, ok = octets(sp, 64); !ok || len(sp) != 0 {
		return errParse
	}
	return nil
}

// handleV3 answers a v3 message (RFC 3412 7.2, RFC 3414 3.2): counted
// errors get a Report when the message is reportable; a message that
// fails authentication never gets its values.
func (r *Responder) handleV3(pkt []byte, s *scratch, set *settings) []byte {
	st := &r.stats
	m := &s.m
	q := &s.req
	if err := m.parse(q.v3, st); err != nil {
		if err == errParse {
			st.InASNParseErrs.Add(1)
		}
		s.why = err
		return nil
	}
	e := r.engine
	if string(m.engineID) != string(e.id) {
		return r.refuse(s, set, r.discoveries, &st.UnknownEngineIDs, oidUnknownEngineIDs, errUnknownEngine)
	}
	u := set.users[string(m.user)]
	if u == nil {
		return r.refuse(s, set, r.fails, &st.UnknownUserNames, oidUnknownUserNames, errUnknownUser)
	}
	if m.level() > u.level {
		return r.refuse(s, set, r.fails, &st.UnsupportedSecLevels, oidUnsupportedSecLevels, errSecLevel)
	}
	if m.level()&1 != 0 {
		if !r.verify(pkt, m, u, s) {
			return r.refuse(s, set, r.fails, &st.WrongDigests, oidWrongDigests, errWrongDigest)
		}
		if r.fails.Spent(s.from.Addr(), r.now()) {
			st.Throttled.Add(1)
			s.why = errThrottled
			return nil
		}
		now := int64(r.engineTime())
		if e.boots == usm.MaxBoots || uint32(m.boots) != e.boots ||
			int64(m.time) > now+timeWindow || int64(m.time) < now-timeWindow {
			return r.report(s, set, &st.NotInTimeWindows, oidNotInTimeWindows, u, errNotInTime)
		}
	}
	scoped := m.data
	if m.level()&2 != 0 {
		if len(m.priv) != 8 {
			return r.refuse(s, set, r.fails, &st.DecryptionErrors, oidDecryptionErrors, errDecrypt)
		}
		s.plain = append(s.plain[:0], m.data...)
		cfb(s.aesOf(u), aesIV(&s.iv, uint32(m.boots), uint32(m.time), m.priv), s.plain, true)
		// What follows the scopedPDU is ignored: pysnmp pads it to whole
		// AES blocks, as DES needs (RFC 3414 8.1.1.2), and net-snmp accepts that.
		tag, v, _, ok := tlv(s.plain)
		if !ok || tag != byte(gosnmp.Sequence) {
			st.InASNParseErrs.Add(1)             // a wrong key or AES variant reads as garbage
			r.fails.Fail(s.from.Addr(), r.now()) // a guess of the privacy password
			s.why = errParse
			return nil
		}
		scoped = v
	}
	ctxEngine, b, ok := octets(scoped, 32)
	var ctxName []byte
	if ok {
		ctxName, b, ok = octets(b, 32)
	}
	var tag byte
	var pdu []byte
	if ok {
		tag, pdu, b, ok = tlv(b)
	}
	if !ok || len(b) != 0 {
		st.InASNParseErrs.Add(1)
		s.why = errParse
		return nil
	}
	if len(ctxEngine) != 0 && string(ctxEngine) != string(e.id) {
		st.UnknownPDUHandlers.Add(1)
		s.why = errContextEngine
		return nil
	}
	if len(ctxName) != 0 {
		st.UnknownContexts.Add(1)
		s.why = errContext
		return nil
	}
	q.version, q.community = int(gosnmp.Version2c), nil
	if err := q.decodePDU(tag, pdu); err != nil {
		if err == errNotRequest {
			st.InNotRequests.Add(1)
		} else {
			st.InASNParseErrs.Add(1)
		}
		s.why = err
		return nil
	}
	limit := min(int(m.maxSize), set.maxMsgSize)
	room := limit - v3Overhead(e, m, u)
	if room < 64 {
		st.SilentDrops.Add(1)
		s.why = errTooBigToAnswer
		return nil
	}
	var out []byte
	if m.level() < u.MinLevel {
		w := &s.resp
		w.reset(q, room)
		w.v3 = true
		st.OutAuthorizationErrors.Add(1)
		status, index := fail(q, w, gosnmp.AuthorizationError, -1)
		out, _ = r.finish(w, status, index, s)
	} else {
		out = r.answer(q, s, set, u, room)
	}
	if out == nil {
		return nil
	}
	return r.wrapV3(s, m.level(), u, out, limit)
}

// verify checks the HMAC over the whole message, whose authentication
// parameters are zeroed for the computation and then put back.
func (r *Responder) verify(pkt []byte, m *v3msg, u *user, s *scratch) bool {
	a := u.Keys.Auth
	if len(m.auth) != a.Trunc {
		return false
	}
	got := append(s.digest[:0], m.auth...)
	clear(m.auth) // m.auth lies in pkt
	mac := s.hmacOf(u)
	mac.Write(pkt)
	s.sum = mac.Sum(s.sum[:0])
	copy(m.auth, got)
	return subtle.ConstantTimeCompare(s.sum[:a.Trunc], got) == 1
}

// aesIV is RFC 3826 3.1.2.1's IV: boots, time, then the salt.
func aesIV(iv *[16]byte, boots, time uint32, salt []byte) []byte {
	binary.BigEndian.PutUint32(iv[0:], boots)
	binary.BigEndian.PutUint32(iv[4:], time)
	copy(iv[8:], salt)
	return iv[:]
}

// hmacOf is u's HMAC, reset; the scratch keeps the last user's, so a
// manager's requests cost no new one (Update makes new users).
func (s *scratch) hmacOf(u *user) hash.Hash {
	if s.macUser != u {
		s.mac, s.macUser = hmac.New(u.Keys.Auth.New, u.Keys.AuthKey), u
	}
	s.mac.Reset()
	return s.mac
}

// aesOf is u's AES cipher, kept as hmacOf keeps the HMAC.
func (s *scratch) aesOf(u *user) cipher.Block {
	if s.blockUser != u {
		b, err := aes.NewCipher(u.Keys.PrivKey)
		if err != nil { // the key length is checked in V3.users
			panic(fmt.Sprintf("responder: AES key of %d octets", len(u.Keys.PrivKey)))
		}
		s.block, s.blockUser = b, u
	}
	return s.block
}

// cfb en- or decrypts b in place with AES in CFB-128 mode, no padding
// (RFC 3826 3.1.3). Written out because crypto/cipher's CFB is deprecated.
func cfb(block cipher.Block, iv, b []byte, decrypt bool) {
	var x, k [aes.BlockSize]byte
	copy(x[:], iv)
	for i := 0; i < len(b); i += aes.BlockSize {
		block.Encrypt(k[:], x[:])
		for j := 0; j < aes.BlockSize && i+j < len(b); j++ {
			c := b[i+j]
			b[i+j] = c ^ k[j]
			if decrypt {
				x[j] = c
			} else {
				x[j] = b[i+j]
			}
		}
	}
}
