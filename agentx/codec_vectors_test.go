package agentx

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"

	"github.com/perfagent/subagent/asn1tree"
)

// unhex reads a hex dump; spaces, newlines and "|" are layout only.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	s = strings.NewReplacer(" ", "", "\n", "", "\t", "", "|", "").Replace(s)
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad test vector: %v", err)
	}
	return b
}

// The vectors below are derived by hand from the layouts of RFC 2741
// sections 5 and 6, field by field; they are not produced by this code.
var vectors = []struct {
	name string
	wire string
	pkt  packet
}{
	{
		// Open, network byte order: o.timeout 5, o.id 1.3.6.1.4.1.32473.1
		// compressed to prefix 4 + (1, 32473, 1), o.descr "test".
		name: "Open big-endian",
		wire: `01 01 10 00 | 00000000 | 00000000 | 00000001 | 0000001c
		       05 000000
		       03 04 00 00 | 00000001 | 00007ed9 | 00000001
		       00000004 | 74657374`,
		pkt: packet{header: header{version: 1, typ: typeOpen, flags: flagNetworkByteOrder, packetID: 1, payloadLen: 28},
			timeout: 5, id: asn1tree.MustParse("1.3.6.1.4.1.32473.1"), descr: "test"},
	},
	{
		// The same Open with NETWORK_BYTE_ORDER clear: every multi-byte
		// field, header included, is little-endian.
		name: "Open little-endian",
		wire: `01 01 00 00 | 00000000 | 00000000 | 01000000 | 1c000000
		       05 000000
		       03 04 00 00 | 01000000 | d97e0000 | 01000000
		       04000000 | 74657374`,
		pkt: packet{header: header{version: 1, typ: typeOpen, packetID: 1, payloadLen: 28},
			timeout: 5, id: asn1tree.MustParse("1.3.6.1.4.1.32473.1"), descr: "test"},
	},
	{
		// GetNext from session 7, transaction 9, packet 11: one inclusive
		// range 1.3.6.1.4.1.32473.1 up to 1.3.6.1.4.1.32473.2, one
		// exclusive range 1.2.3 (not compressible) with a null end.
		name: "GetNext two ranges",
		wire: `01 06 10 00 | 00000007 | 00000009 | 0000000b | 00000034
		       03 04 01 00 | 00000001 | 00007ed9 | 00000001
		       03 04 00 00 | 00000001 | 00007ed9 | 00000002
		       03 00 00 00 | 00000001 | 00000002 | 00000003
		       00 00 00 00`,
		pkt: packet{header: header{version: 1, typ: typeGetNext, flags: flagNetworkByteOrder, sessionID: 7, transactionID: 9, packetID: 11, payloadLen: 52},
			ranges: []searchRange{
				{start: asn1tree.MustParse("1.3.6.1.4.1.32473.1"), include: true, end: asn1tree.MustParse("1.3.6.1.4.1.32473.2")},
				{start: asn1tree.MustParse("1.2.3")},
			}},
	},
	{
		// GetBulk with a non-default context "ctx": the context comes
		// first, then non_repeaters 1, max_repetitions 10 (little-endian).
		name: "GetBulk context little-endian",
		wire: `01 07 08 00 | 01000000 | 02000000 | 03000000 | 14000000
		       03000000 | 637478 00
		       0100 | 0a00
		       00 02 00 00
		       00 00 00 00`,
		pkt: packet{header: header{version: 1, typ: typeGetBulk, flags: flagNonDefaultContext, sessionID: 1, transactionID: 2, packetID: 3, payloadLen: 20},
			context: "ctx", nonRepeaters: 1, maxRepetitions: 10,
			ranges: []searchRange{{start: asn1tree.MustParse("1.3.6.1.2")}}},
	},
	{
		// Response with sysUpTime 0x64, noError, and three VarBinds: a
		// Counter64 (high word first in network order), an Octet String
		// "abcde" padded to 8 bytes, and endOfMibView.
		name: "Response varbinds",
		wire: `01 12 10 00 | 00000001 | 00000002 | 00000003 | 00000048
		       00000064 | 0000 | 0000
		       0046 0000 | 03 04 00 00 | 00000001 | 00007ed9 | 00000001 | 00000001 00000002
		       0004 0000 | 02 04 00 00 | 00000001 | 00007ed9 | 00000005 | 6162636465 000000
		       0082 0000 | 00 04 00 00`,
		pkt: packet{header: header{version: 1, typ: typeResponse, flags: flagNetworkByteOrder, sessionID: 1, transactionID: 2, packetID: 3, payloadLen: 72},
			sysUpTime: 100, varbinds: []varbind{
				{typ: vbCounter64, name: asn1tree.MustParse("1.3.6.1.4.1.32473.1"), num: 1<<32 | 2},
				{typ: vbOctetString, name: asn1tree.MustParse("1.3.6.1.4.1.32473"), str: "abcde"},
				{typ: vbEndOfMibView, name: asn1tree.MustParse("1.3.6.1.4")},
			}},
	},
	{
		// Register of the range 1.3.6.1.2.1.2.2.1.[1-22].7 (the RFC's own
		// ifEntry example): range_subid 10, upper_bound 22, priority 127.
		name: "Register range",
		wire: `01 03 10 00 | 00000005 | 00000000 | 00000004 | 00000024
		       00 7f 0a 00
		       06 02 00 00 | 00000001 | 00000002 | 00000002 | 00000001 | 00000001 | 00000007
		       00000016`,
		pkt: packet{header: header{version: 1, typ: typeRegister, flags: flagNetworkByteOrder, sessionID: 5, packetID: 4, payloadLen: 36},
			priority: 127, rangeSubID: 10, upperBound: 22, subtree: asn1tree.MustParse("1.3.6.1.2.1.2.2.1.1.7")},
	},
	{
		// Close with reasonShutdown.
		name: "Close",
		wire: `01 02 10 00 | 00000005 | 00000000 | 00000006 | 00000004
		       05 000000`,
		pkt: packet{header: header{version: 1, typ: typeClose, flags: flagNetworkByteOrder, sessionID: 5, packetID: 6, payloadLen: 4},
			reason: reasonShutdown},
	},
	{
		// Notify: snmpTrapOID.0 (prefix 6: 3.1.1.4.1.0) = OID
		// 1.3.6.1.4.1.32473.2.0.1, then an Integer -1.
		name: "Notify",
		wire: `01 0c 10 00 | 00000005 | 00000000 | 00000008 | 0000004c
		       0006 0000 | 06 06 00 00 | 00000003 | 00000001 | 00000001 | 00000004 | 00000001 | 00000000
		       05 04 00 00 | 00000001 | 00007ed9 | 00000002 | 00000000 | 00000001
		       0002 0000 | 02 04 00 00 | 00000001 | 00007ed9 | ffffffff`,
		pkt: packet{header: header{version: 1, typ: typeNotify, flags: flagNetworkByteOrder, sessionID: 5, packetID: 8, payloadLen: 76},
			varbinds: []varbind{
				{typ: vbOID, name: SnmpTrapOID0, oid: asn1tree.MustParse("1.3.6.1.4.1.32473.2.0.1")},
				{typ: vbInteger, name: asn1tree.MustParse("1.3.6.1.4.1.32473"), num: ^uint64(0)},
			}},
	},
}

func TestVectorsDecode(t *testing.T) {
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			got, err := decodePacket(unhex(t, v.wire))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			want := v.pkt
			if !reflect.DeepEqual(normalize(got), normalize(&want)) {
				t.Errorf("decoded\n %+v\nwant\n %+v", *got, want)
			}
		})
	}
}

func TestVectorsEncode(t *testing.T) {
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			p := v.pkt
			p.payloadLen = 0 // the encoder computes it
			got, err := appendPacket(nil, &p)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			if want := unhex(t, v.wire); !bytes.Equal(got, want) {
				t.Errorf("encoded\n %x\nwant\n %x", got, want)
			}
		})
	}
}

// normalize makes empty slices nil so DeepEqual compares content.
func normalize(p *packet) packet {
	q := *p
	if len(q.ranges) == 0 {
		q.ranges = nil
	}
	if len(q.varbinds) == 0 {
		q.varbinds = nil
	}
	nilIfEmpty := func(o asn1tree.OID) asn1tree.OID {
		if len(o) == 0 {
			return nil
		}
		return o
	}
	q.id, q.subtree = nilIfEmpty(q.id), nilIfEmpty(q.subtree)
	q.ranges = append([]searchRange(nil), q.ranges...)
	for i := range q.ranges {
		q.ranges[i].start, q.ranges[i].end = nilIfEmpty(q.ranges[i].start), nilIfEmpty(q.ranges[i].end)
	}
	q.varbinds = append([]varbind(nil), q.varbinds...)
	for i := range q.varbinds {
		q.varbinds[i].name, q.varbinds[i].oid = nilIfEmpty(q.varbinds[i].name), nilIfEmpty(q.varbinds[i].oid)
	}
	if len(q.ranges) == 0 {
		q.ranges = nil
	}
	if len(q.varbinds) == 0 {
		q.varbinds = nil
	}
	return q
}
