package responder

import (
	"encoding/asn1"
	"fmt"
	"strings"
	"testing"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/asn1tree"
)

const base = "1.3.6.1.4.1.32473.1"

// Sizes of the fixture's table of long strings: enough to overflow a
// 1472-byte message many times over.
const (
	rows   = 200
	rowLen = 60
)

func oid(s string) asn1tree.OID { return asn1tree.MustParse(s) }

// rowValue is the string of table row i; distinct per row so a shifted or
// repeated row is caught.
func rowValue(i int) string {
	s := fmt.Sprintf("row-%03d-", i)
	return s + strings.Repeat(string(rune('a'+i%26)), rowLen-len(s))
}

// fixtureEntries covers every kind, three Counter64 in a row (v1 skips
// them), a long table, and a Counter64 as the very last entry.
func fixtureEntries() []asn1tree.Entry[asn1tree.Value] {
	b := oid(base)
	e := []asn1tree.Entry[asn1tree.Value]{
		{OID: b.Append(1, 1, 0), Val: asn1tree.Int(-42)},
		{OID: b.Append(1, 2, 0), Val: asn1tree.Gauge(4000000000)},
		{OID: b.Append(1, 3, 0), Val: asn1tree.Counter(1<<40 + 5)},
		{OID: b.Append(1, 4, 0), Val: asn1tree.Str("hello responder")},
		{OID: b.Append(1, 5, 0), Val: asn1tree.Value{Kind: asn1tree.TimeTicks, Num: 12345}},
		{OID: b.Append(1, 6, 0), Val: asn1tree.Value{Kind: asn1tree.ObjectIdentifier, OID: b}},
		{OID: b.Append(1, 7, 0), Val: asn1tree.Value{Kind: asn1tree.Counter32, Num: 7}},
		{OID: b.Append(1, 8, 0), Val: asn1tree.Counter(8)},
		{OID: b.Append(1, 9, 0), Val: asn1tree.Counter(1<<64 - 1)},
		{OID: b.Append(1, 10, 0), Val: asn1tree.Int(2147483647)},
	}
	for i := 1; i <= rows; i++ {
		e = append(e, asn1tree.Entry[asn1tree.Value]{OID: b.Append(2, uint32(i), 0), Val: asn1tree.Str(rowValue(i))})
	}
	return append(e, asn1tree.Entry[asn1tree.Value]{OID: b.Append(3, 1, 0), Val: asn1tree.Counter(99)})
}

func fixtureTree(t testing.TB) *asn1tree.Tree[asn1tree.Value] {
	t.Helper()
	tr, err := asn1tree.Build(fixtureEntries())
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// newTestResponder serves the fixture; cfg's zero fields take defaults.
func newTestResponder(t testing.TB, cfg Config) *Responder {
	t.Helper()
	if cfg.Community == "" {
		cfg.Community = "public"
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	tr := fixtureTree(t)
	var v asn1tree.View = tr
	r, err := New(cfg, func() asn1tree.View { return v }, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// reqPacket builds a request with gosnmp; for Set every value is the
// OctetString "x".
func reqPacket(t testing.TB, ver gosnmp.SnmpVersion, community string, typ gosnmp.PDUType, nonRep uint8, maxRep uint32, oids ...string) []byte {
	t.Helper()
	p := &gosnmp.SnmpPacket{Version: ver, Community: community, PDUType: typ, RequestID: 4242,
		NonRepeaters: nonRep, MaxRepetitions: maxRep}
	for _, o := range oids {
		vb := gosnmp.SnmpPDU{Name: o, Type: gosnmp.Null}
		if typ == gosnmp.SetRequest {
			vb = gosnmp.SnmpPDU{Name: o, Type: gosnmp.OctetString, Value: "x"}
		}
		p.Variables = append(p.Variables, vb)
	}
	b, err := p.MarshalMsg()
	if err != nil {
		t.Fatalf("gosnmp cannot build the request: %v", err)
	}
	return b
}

// ask runs one request through the handler and decodes the answer with
// gosnmp, checking what every response must satisfy.
func ask(t testing.TB, r *Responder, req []byte) *gosnmp.SnmpPacket {
	t.Helper()
	var s scratch
	out := r.handle(req, &s)
	if out == nil {
		t.Fatalf("no response (%v)", s.why)
	}
	return checkResponse(t, r, req, out)
}

// checkResponse checks a response to a request gosnmp built.
func checkResponse(t testing.TB, r *Responder, req, out []byte) *gosnmp.SnmpPacket {
	t.Helper()
	p := checkWire(t, r, out)
	q, err := (&gosnmp.GoSNMP{}).SnmpDecodePacket(req)
	if err != nil {
		t.Fatalf("gosnmp cannot decode its own request: %v", err)
	}
	if p.RequestID != q.RequestID || p.Version != q.Version || p.Community != q.Community {
		t.Fatalf("response id/version/community %d/%v/%q, request %d/%v/%q",
			p.RequestID, p.Version, p.Community, q.RequestID, q.Version, q.Community)
	}
	return p
}

// checkWire checks what every response must be: within the size limit,
// decodable by gosnmp and by encoding/asn1, a Response PDU.
func checkWire(t testing.TB, r *Responder, out []byte) *gosnmp.SnmpPacket {
	t.Helper()
	if lim := r.live.Load().maxMsgSize; len(out) > lim {
		t.Fatalf("response of %d bytes exceeds the limit %d", len(out), lim)
	}
	p, err := (&gosnmp.GoSNMP{}).SnmpDecodePacket(out)
	if err != nil {
		t.Fatalf("gosnmp cannot decode the response: %v\n% x", err, out)
	}
	if p.PDUType != gosnmp.GetResponse {
		t.Fatalf("response PDU type %v", p.PDUType)
	}
	if _, _, _, n := header(t, out); n != len(p.Variables) {
		t.Fatalf("encoding/asn1 sees %d varbinds, gosnmp %d", n, len(p.Variables))
	}
	return p
}

// header reads request-id, error-status and error-index and counts the
// varbinds with encoding/asn1, independently of gosnmp and of this package
// (gosnmp keeps error-index in a uint8 and request-id in a uint32).
func header(t testing.TB, msg []byte) (id, status, index int64, varbinds int) {
	t.Helper()
	var m struct {
		Version   int
		Community []byte
		PDU       asn1.RawValue
	}
	if rest, err := asn1.Unmarshal(msg, &m); err != nil || len(rest) != 0 {
		t.Fatalf("message: %v (%d bytes left)", err, len(rest))
	}
	rest := m.PDU.Bytes
	for _, dst := range []*int64{&id, &status, &index} {
		var err error
		if rest, err = asn1.Unmarshal(rest, dst); err != nil {
			t.Fatalf("PDU header: %v", err)
		}
	}
	var vbl []asn1.RawValue
	if _, err := asn1.Unmarshal(rest, &vbl); err != nil {
		t.Fatalf("varbind list: %v", err)
	}
	return id, status, index, len(vbl)
}

// dotted is gosnmp's spelling of an OID.
func dotted(o asn1tree.OID) string { return "." + o.String() }

func rowOID(i int) string { return fmt.Sprintf("%s.2.%d.0", base, i) }
