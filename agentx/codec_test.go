package agentx

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/perfagent/subagent/asn1tree"
)

// randOID returns nil, a 1.3.6.1.X OID (compressible or not) or any OID.
func randOID(r *rand.Rand) asn1tree.OID {
	switch r.IntN(5) {
	case 0:
		return nil
	case 1, 2:
		o := asn1tree.OID{1, 3, 6, 1, uint32(r.IntN(300))}
		for n := r.IntN(10); n > 0; n-- {
			o = append(o, r.Uint32N(100000))
		}
		return o
	case 3:
		o := make(asn1tree.OID, 1+r.IntN(asn1tree.MaxLen))
		for i := range o {
			o[i] = r.Uint32()
		}
		return o
	}
	return asn1tree.OID{r.Uint32N(3), r.Uint32N(40), r.Uint32()}
}

func randString(r *rand.Rand) string {
	b := make([]byte, r.IntN(12))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return string(b)
}

var wireTypes = []vbType{vbInteger, vbOctetString, vbNull, vbOID, vbIPAddress, vbCounter32, vbGauge32,
	vbTimeTicks, vbOpaque, vbCounter64, vbNoSuchObject, vbNoSuchInstance, vbEndOfMibView}

func randVarBinds(r *rand.Rand) []varbind {
	vbs := make([]varbind, r.IntN(6))
	for i := range vbs {
		v := varbind{typ: wireTypes[r.IntN(len(wireTypes))], name: randOID(r)}
		switch v.typ {
		case vbInteger:
			v.num = uint64(int64(int32(r.Uint32())))
		case vbCounter32, vbGauge32, vbTimeTicks:
			v.num = uint64(r.Uint32())
		case vbCounter64:
			v.num = r.Uint64()
		case vbOctetString, vbOpaque, vbIPAddress:
			v.str = randString(r)
		case vbOID:
			v.oid = randOID(r)
		}
		vbs[i] = v
	}
	return vbs
}

// randPacket builds a random PDU of any type with every field its type
// carries set at random.
func randPacket(r *rand.Rand, big bool) *packet {
	p := &packet{header: header{version: 1, typ: pduType(1 + r.IntN(18)), sessionID: r.Uint32(),
		transactionID: r.Uint32(), packetID: r.Uint32()}}
	if big {
		p.flags |= flagNetworkByteOrder
	}
	if r.IntN(3) == 0 {
		p.flags |= flagInstanceRegistration
	}
	if p.typ.hasContext() && r.IntN(3) == 0 {
		p.flags |= flagNonDefaultContext
		p.context = randString(r)
	}
	switch p.typ {
	case typeOpen:
		p.timeout, p.id, p.descr = uint8(r.Uint32()), randOID(r), randString(r)
	case typeClose:
		p.reason = closeReason(1 + r.IntN(6))
	case typeRegister, typeUnregister:
		if p.typ == typeRegister {
			p.timeout = uint8(r.Uint32())
		}
		p.priority, p.subtree = uint8(r.Uint32()), randOID(r)
		if len(p.subtree) > 0 && r.IntN(2) == 0 {
			p.rangeSubID, p.upperBound = uint8(1+r.IntN(len(p.subtree))), r.Uint32()
		}
	case typeGet, typeGetNext, typeGetBulk:
		if p.typ == typeGetBulk {
			p.nonRepeaters, p.maxRepetitions = uint16(r.Uint32()), uint16(r.Uint32())
		}
		for n := r.IntN(5); n > 0; n-- {
			p.ranges = append(p.ranges, searchRange{start: randOID(r), include: r.IntN(2) == 0, end: randOID(r)})
		}
	case typeTestSet, typeNotify, typeIndexAllocate, typeIndexDeallocate:
		p.varbinds = randVarBinds(r)
	case typeAddAgentCaps:
		p.id, p.descr = randOID(r), randString(r)
	case typeRemoveAgentCaps:
		p.id = randOID(r)
	case typeResponse:
		p.sysUpTime, p.resError, p.resIndex = r.Uint32(), ErrorCode(r.IntN(270)), uint16(r.Uint32())
		p.varbinds = randVarBinds(r)
	}
	return p
}

func TestRoundTripBothByteOrders(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	seen := map[pduType]int{}
	for i := 0; i < 5000; i++ {
		big := i%2 == 0
		p := randPacket(r, big)
		b, err := appendPacket(nil, p)
		if err != nil {
			t.Fatalf("encode %s: %v", p.typ, err)
		}
		if len(b)%4 != 0 {
			t.Fatalf("%s encodes to %d bytes, not a multiple of 4", p.typ, len(b))
		}
		q, err := decodePacket(b)
		if err != nil {
			t.Fatalf("decode %s (big=%v): %v\n%x", p.typ, big, err, b)
		}
		p.payloadLen = uint32(len(b) - headerLen)
		if !reflect.DeepEqual(normalize(p), normalize(q)) {
			t.Fatalf("round trip of %s (big=%v) changed it:\n in  %+v\n out %+v", p.typ, big, *p, *q)
		}
		seen[p.typ]++
	}
	for typ := typeOpen; typ <= typeResponse; typ++ {
		if seen[typ] == 0 {
			t.Errorf("no %s PDU was generated", typ)
		}
	}
}

// Byte order must change the bytes of every multi-byte field but nothing
// else: the two encodings of one PDU decode to the same content.
func TestByteOrdersDiffer(t *testing.T) {
	p := vectors[0].pkt
	bigB, _ := appendPacket(nil, &p)
	p.flags &^= flagNetworkByteOrder
	littleB, _ := appendPacket(nil, &p)
	if string(bigB) == string(littleB) {
		t.Fatal("both byte orders encode alike")
	}
	a, err1 := decodePacket(bigB)
	b, err2 := decodePacket(littleB)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	a.flags, b.flags = 0, 0
	if !reflect.DeepEqual(normalize(a), normalize(b)) {
		t.Errorf("byte orders decode differently:\n%+v\n%+v", *a, *b)
	}
}

func TestPrefixCompression(t *testing.T) {
	cases := []struct {
		oid    string
		prefix byte
		nsub   byte
	}{
		{"1.3.6.1.4.1.32473.1", 4, 3},
		{"1.3.6.1.2", 2, 0},
		{"1.3.6.1.255.7", 255, 1},
		{"1.3.6.1.256.7", 0, 6}, // prefix must fit a byte
		{"1.3.6.1.0.7", 0, 6},   // prefix 0 means "none"
		{"1.3.6.1", 0, 4},
		{"1.3.6.2.4", 0, 5},
	}
	for _, c := range cases {
		e := encoder{big: true}
		e.oid(asn1tree.MustParse(c.oid), false)
		if e.b[0] != c.nsub || e.b[1] != c.prefix {
			t.Errorf("%s: n_subid %d prefix %d, want %d and %d", c.oid, e.b[0], e.b[1], c.nsub, c.prefix)
		}
		d := decoder{b: e.b, big: true}
		got, _ := d.oid("test")
		if d.err != nil || got.String() != c.oid {
			t.Errorf("%s decodes to %s (%v)", c.oid, got, d.err)
		}
	}
}

func TestEncodeRejects(t *testing.T) {
	long := make(asn1tree.OID, asn1tree.MaxLen+1)
	bad := []*packet{
		{header: header{typ: typeOpen}, id: long},
		{header: header{typ: typeRegister}, subtree: asn1tree.OID{1, 2}, rangeSubID: 3},
		{header: header{typ: typeResponse}, varbinds: []varbind{{typ: 99}}},
		{header: header{typ: 0}},
		{header: header{typ: typeNotify}, varbinds: []varbind{{typ: vbOctetString, str: string(make([]byte, maxPayload))}}},
	}
	for _, p := range bad {
		if _, err := appendPacket(nil, p); err == nil {
			t.Errorf("encoding %+v succeeded", *p)
		}
	}
}

// Every strict prefix of a valid PDU is malformed and must fail cleanly.
func TestTruncatedBodies(t *testing.T) {
	for _, v := range vectors {
		b := unhex(t, v.wire)
		h, err := decodeHeader(b)
		if err != nil {
			t.Fatal(err)
		}
		full := len(v.pkt.ranges) + len(v.pkt.varbinds)
		for n := 0; n < len(b)-headerLen; n++ {
			p := &packet{header: h}
			var d decoder
			if err := d.body(p, b[headerLen:headerLen+n]); err == nil {
				// A list PDU cut between two entries is a valid shorter
				// PDU; anything else must fail.
				if got := len(p.ranges) + len(p.varbinds); full > 0 && got < full {
					continue
				}
				t.Errorf("%s cut to %d payload bytes decoded without error", v.name, n)
			}
		}
	}
}

func TestMalformed(t *testing.T) {
	cases := map[string]string{
		"short header":      `01 06 10 00 00000000`,
		"version 2":         `02 06 10 00 | 00000000 | 00000000 | 00000000 | 00000000`,
		"length mismatch":   `01 06 10 00 | 00000000 | 00000000 | 00000000 | 00000008 | 00000000`,
		"unknown type":      `01 63 10 00 | 00000000 | 00000000 | 00000000 | 00000000`,
		"n_subid too big":   `01 06 10 00 | 00000000 | 00000000 | 00000000 | 00000004 | 81 00 00 00`,
		"prefix overflows":  `01 06 10 00 | 00000000 | 00000000 | 00000000 | 00000004 | 7c 04 00 00`,
		"subids missing":    `01 06 10 00 | 00000000 | 00000000 | 00000000 | 00000008 | 02 00 00 00 | 00000001`,
		"string too long":   `01 01 10 00 | 00000000 | 00000000 | 00000000 | 0000000c | 00000000 | 00000000 | 7fffffff`,
		"string unpadded":   `01 01 10 00 | 00000000 | 00000000 | 00000000 | 0000000c | 00000000 | 00000000 | 00000001`,
		"unknown vb type":   `01 0c 10 00 | 00000000 | 00000000 | 00000000 | 00000008 | 0063 0000 | 00000000`,
		"trailing bytes":    `01 0d 10 00 | 00000000 | 00000000 | 00000000 | 00000004 | 00000000`,
		"range_subid > len": `01 03 10 00 | 00000000 | 00000000 | 00000000 | 00000010 | 00 7f 05 00 | 01 00 00 00 | 00000001 | 00000009`,
		"counter64 cut":     `01 12 10 00 | 00000000 | 00000000 | 00000000 | 00000014 | 00000000 | 00000000 | 0046 0000 | 00000000 | 00000001`,
	}
	for name, wire := range cases {
		if _, err := decodePacket(unhex(t, wire)); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
	// Body errors are parse errors, which the session answers.
	_, err := decodePacket(unhex(t, cases["unknown vb type"]))
	var pe *parseError
	if !errors.As(err, &pe) {
		t.Errorf("unknown VarBind type gave %T %v, want *parseError", err, err)
	}
}

func TestTooManyVarBinds(t *testing.T) {
	p := &packet{header: header{version: 1, typ: typeGetNext, flags: flagNetworkByteOrder}}
	for i := 0; i <= maxVarBinds; i++ {
		p.ranges = append(p.ranges, searchRange{})
	}
	if _, err := appendPacket(nil, p); err == nil {
		t.Fatal("encoded more than maxVarBinds ranges")
	}
	// Build it by hand: maxVarBinds+1 pairs of null OIDs.
	b, _ := appendPacket(nil, &packet{header: p.header})
	b = append(b, make([]byte, 8*(maxVarBinds+1))...)
	setU32(b[16:], uint32(len(b)-headerLen), true)
	if _, err := decodePacket(b); err == nil {
		t.Fatal("decoded more than maxVarBinds ranges")
	}
}

func TestErrorCodeNames(t *testing.T) {
	for code, name := range map[ErrorCode]string{
		NoError: "noError", GenErr: "genErr", NotWritable: "notWritable", InconsistentName: "inconsistentName",
		OpenFailed: "openFailed", NotOpen: "notOpen", IndexWrongType: "indexWrongType",
		DuplicateRegistration: "duplicateRegistration", UnknownRegistration: "unknownRegistration",
		UnknownAgentCaps: "unknownAgentCaps", ParseError: "parseError", RequestDenied: "requestDenied",
		ProcessingError: "processingError", 19: "error(19)", 269: "error(269)",
	} {
		if got := code.String(); got != name {
			t.Errorf("ErrorCode(%d) = %q, want %q", uint16(code), got, name)
		}
	}
	if DuplicateRegistration != 263 || ProcessingError != 268 || OpenFailed != 256 {
		t.Error("AgentX error numbers drifted from RFC 2741 section 6.2.16")
	}
	err := error(&ResponseError{Op: "Register 1.2", Code: DuplicateRegistration})
	if !errors.Is(err, DuplicateRegistration) || errors.Is(err, UnknownRegistration) {
		t.Errorf("errors.Is does not see the code through %v", err)
	}
}
