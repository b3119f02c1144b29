package responder

import (
	"encoding/asn1"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/asn1tree"
)

func TestAppendOID(t *testing.T) {
	for _, c := range []struct {
		in   []byte
		want string // "" when invalid
	}{
		{[]byte{0x2b, 6, 1}, "1.3.6.1"},
		{[]byte{0x00}, "0.0"},
		{[]byte{0x27}, "0.39"},
		{[]byte{0x50}, "2.0"},
		{[]byte{0x88, 0x37, 3}, "2.999.3"},
		{[]byte{0x2b, 0x8f, 0xff, 0xff, 0xff, 0x7f}, "1.3.4294967295"},
		{[]byte{0x2b, 0x90, 0x80, 0x80, 0x80, 0x00}, ""},       // 2^32
		{[]byte{0x90, 0x80, 0x80, 0x80, 0x4f}, "2.4294967295"}, // first arc at its top
		{[]byte{0x90, 0x80, 0x80, 0x80, 0x50}, ""},
		{[]byte{0x2b, 0x80, 0x01}, ""}, // leading 0x80
		{[]byte{0x2b, 0x81}, ""},       // truncated
		{nil, ""},
		{append([]byte{0x2b}, make([]byte, 126)...), "1.3" + strings.Repeat(".0", 126)},
		{append([]byte{0x2b}, make([]byte, 127)...), ""}, // 129 arcs
	} {
		got, ok := appendOID(nil, c.in)
		if (c.want == "") != !ok || (ok && asn1tree.OID(got).String() != c.want) {
			t.Errorf("% x: %v %v, want %q", c.in, asn1tree.OID(got), ok, c.want)
		}
		if ok { // and back
			if enc := appendOIDContents(nil, got); string(enc) != string(c.in) || oidLen(got) != len(c.in) {
				t.Errorf("%s encodes as % x (length %d), want % x", c.want, enc, oidLen(got), c.in)
			}
		}
	}
}

func TestTLVAndInt(t *testing.T) {
	for _, c := range []struct {
		in    []byte
		ok    bool
		value int32
	}{
		{[]byte{2, 1, 0xff}, true, -1},
		{[]byte{2, 4, 0x80, 0, 0, 0}, true, math.MinInt32},
		{[]byte{2, 0x81, 2, 0x01, 0x2c}, true, 300}, // long-form length
		{[]byte{2, 0x84, 0, 0, 0, 1, 7}, true, 7},
		{[]byte{2, 5, 0, 0x80, 0, 0, 0}, false, 0}, // beyond 32 bits
		{[]byte{2, 0, 0}, false, 0},
		{[]byte{2, 0x80, 1, 0, 0}, false, 0}, // indefinite length
		{[]byte{2, 0x85, 0, 0, 0, 0, 1, 7}, false, 0},
		{[]byte{2, 2, 1}, false, 0},
		{[]byte{0x1f, 1, 1}, false, 0}, // multi-octet tag
	} {
		_, v, _, ok := tlv(c.in)
		var x int32
		if ok {
			x, ok = parseInt32(v)
		}
		if ok != c.ok || x != c.value {
			t.Errorf("% x: %d %v, want %d %v", c.in, x, ok, c.value, c.ok)
		}
	}
}

// TestValueEncodingAgainstGosnmp encodes boundary values and has gosnmp
// decode them.
func TestValueEncodingAgainstGosnmp(t *testing.T) {
	vals := []asn1tree.Value{
		asn1tree.Int(0), asn1tree.Int(-1), asn1tree.Int(127), asn1tree.Int(128), asn1tree.Int(-129),
		asn1tree.Int(math.MaxInt32), asn1tree.Int(math.MinInt32),
		asn1tree.Gauge(0), asn1tree.Gauge(128), asn1tree.Gauge(1 << 31), asn1tree.Gauge(math.MaxUint32),
		{Kind: asn1tree.Counter32, Num: math.MaxUint32}, {Kind: asn1tree.TimeTicks, Num: 1 << 31},
		asn1tree.Counter(0), asn1tree.Counter(1 << 63), asn1tree.Counter(math.MaxUint64),
		asn1tree.Str(""), asn1tree.Str(strings.Repeat("s", 300)),
		{Kind: asn1tree.ObjectIdentifier, OID: oid("2.999.1")},
		{Kind: asn1tree.ObjectIdentifier, OID: oid("0.0")},
	}
	w := response{}
	q := request{version: 1, community: []byte("c"), id: 7}
	w.reset(&q, MaxMsgSizeCap)
	for i := range vals {
		var ok bool
		if w.buf, ok = appendVarBind(w.buf, oid(fmt.Sprintf("1.3.6.%d", i)), &vals[i]); !ok {
			t.Fatalf("value %v not encoded", vals[i])
		}
	}
	out := w.finish(0, 0)
	p, err := (&gosnmp.GoSNMP{}).SnmpDecodePacket(out)
	if err != nil {
		t.Fatalf("gosnmp: %v", err)
	}
	if len(p.Variables) != len(vals) {
		t.Fatalf("%d varbinds", len(p.Variables))
	}
	for i, v := range vals {
		if got := p.Variables[i]; got.Type != kindTag[v.Kind] || gotValue(got) != want(v) {
			t.Errorf("%v %v: decoded as %v %q", v.Kind, v, got.Type, gotValue(got))
		}
	}
	// Values the low 32 bits of Num define; Integer32 sign-extends.
	for _, c := range []struct {
		v    asn1tree.Value
		want string
	}{
		{asn1tree.Value{Kind: asn1tree.Integer32, Num: 1<<32 + 5}, "5"},
		{asn1tree.Value{Kind: asn1tree.Gauge32, Num: 1<<32 + 6}, "6"},
	} {
		w.clear()
		w.buf, _ = appendVarBind(w.buf, oid("1.3"), &c.v)
		p, err := (&gosnmp.GoSNMP{}).SnmpDecodePacket(w.finish(0, 0))
		if err != nil || gotValue(p.Variables[0]) != c.want {
			t.Errorf("%+v: %v %v", c.v, err, p.Variables)
		}
	}
	for _, bad := range []asn1tree.Value{{}, {Kind: asn1tree.ObjectIdentifier, OID: oid("3.1")},
		{Kind: asn1tree.ObjectIdentifier, OID: oid("1.40")}, {Kind: 99}} {
		if _, ok := appendVarBind(nil, oid("1.3"), &bad); ok {
			t.Errorf("%+v encoded", bad)
		}
	}
}

// TestLengthForms: long-form lengths at their boundaries decode with gosnmp.
func TestLengthForms(t *testing.T) {
	for _, n := range []int{0, 127, 128, 255, 256, 65535, 70000} {
		w := response{}
		q := request{version: 1, community: []byte("c")}
		w.reset(&q, 1<<20)
		v := asn1tree.Str(strings.Repeat("L", n))
		w.buf, _ = appendVarBind(w.buf, oid("1.3"), &v)
		out := w.finish(0, 0)
		p, err := (&gosnmp.GoSNMP{}).SnmpDecodePacket(out)
		if err != nil || len(gotValue(p.Variables[0])) != n {
			t.Errorf("string of %d: %v", n, err)
		}
	}
}

func TestSilentDrop(t *testing.T) {
	long := strings.Repeat("c", 460) // leaves no room even for tooBig in 484 bytes
	r := newTestResponder(t, Config{Community: long, MaxMsgSize: MinMsgSize})
	var s scratch
	req := withCommunity(t, reqPacket(t, gosnmp.Version2c, "c", gosnmp.GetRequest, 0, 0, base+".1.4.0"), long)
	if out := r.handle(req, &s); out != nil {
		t.Fatalf("answered %d bytes", len(out))
	}
	if c := r.Stats().Snapshot(); c.SilentDrops != 1 || c.OutGetResponses != 0 || s.why != errTooBigToAnswer {
		t.Errorf("%v, counters %+v", s.why, c)
	}
}

// withCommunity re-encodes a message with another community; gosnmp
// writes the length of a community of 128 bytes or more wrong.
func withCommunity(t *testing.T, msg []byte, community string) []byte {
	t.Helper()
	var m struct {
		Version   int
		Community []byte
		PDU       asn1.RawValue
	}
	if _, err := asn1.Unmarshal(msg, &m); err != nil {
		t.Fatal(err)
	}
	m.Community = []byte(community)
	out, err := asn1.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRequestValues(t *testing.T) {
	for _, c := range []struct {
		tag  byte
		v    []byte
		want bool
	}{
		{0x05, nil, true}, {0x05, []byte{0}, false},
		{0x40, []byte{127, 0, 0, 1}, true}, {0x40, []byte{1}, false},
		{0x41, []byte{0, 0xff, 0xff, 0xff, 0xff}, true}, {0x41, []byte{1, 0, 0, 0, 0}, false}, {0x41, []byte{0x80}, false},
		{0x46, []byte{0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, true}, {0x46, nil, false},
		{0x02, []byte{0xff}, true}, {0x02, []byte{0, 0, 0, 0, 1}, false},
		{0x06, []byte{0x2b, 6}, true}, {0x06, []byte{0x2b, 0x80}, false},
		{0x44, []byte{0x9f, 0x78, 4, 1, 2, 3, 4}, true}, {0x44, []byte{0x9f, 0x78, 1, 1}, false}, {0x44, []byte{1, 2}, true},
		{0x82, nil, true}, {0x82, []byte{0}, false},
		{0x03, []byte{0}, false}, // BIT STRING is no SNMP syntax
	} {
		if got := validValue(c.tag, c.v); got != c.want {
			t.Errorf("tag %#x % x: %v, want %v", c.tag, c.v, got, c.want)
		}
	}
}
