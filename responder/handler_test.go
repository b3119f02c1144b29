package responder

import (
	"fmt"
	"testing"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/asn1tree"
)

var kindTag = map[asn1tree.Kind]gosnmp.Asn1BER{
	asn1tree.Integer32: gosnmp.Integer, asn1tree.Gauge32: gosnmp.Gauge32,
	asn1tree.Counter32: gosnmp.Counter32, asn1tree.Counter64: gosnmp.Counter64,
	asn1tree.OctetString: gosnmp.OctetString, asn1tree.TimeTicks: gosnmp.TimeTicks,
	asn1tree.ObjectIdentifier: gosnmp.ObjectIdentifier,
}

// want formats a tree value the way gotValue formats gosnmp's decoding.
func want(v asn1tree.Value) string {
	switch v.Kind {
	case asn1tree.Integer32:
		return fmt.Sprint(v.Signed())
	case asn1tree.OctetString:
		return v.Str
	case asn1tree.ObjectIdentifier:
		return dotted(v.OID)
	}
	return fmt.Sprint(v.Num)
}

func gotValue(p gosnmp.SnmpPDU) string {
	if b, ok := p.Value.([]byte); ok {
		return string(b)
	}
	return fmt.Sprint(p.Value)
}

// checkVarBind compares a response varbind with a fixture entry.
func checkVarBind(t *testing.T, got gosnmp.SnmpPDU, e asn1tree.Entry[asn1tree.Value]) {
	t.Helper()
	if got.Name != dotted(e.OID) || got.Type != kindTag[e.Val.Kind] || gotValue(got) != want(e.Val) {
		t.Errorf("varbind %s %v %q, want %s %v %q", got.Name, got.Type, gotValue(got),
			dotted(e.OID), kindTag[e.Val.Kind], want(e.Val))
	}
}

func TestGetEveryKindV2c(t *testing.T) {
	r := newTestResponder(t, Config{})
	entries := fixtureTree(t)
	var oids []string
	var wantEntries []asn1tree.Entry[asn1tree.Value]
	for i := 0; i < entries.Len(); i++ {
		o, v := entries.At(i)
		if o.HasPrefix(oid(base+".1")) || o.HasPrefix(oid(base+".3")) {
			oids = append(oids, dotted(o))
			wantEntries = append(wantEntries, asn1tree.Entry[asn1tree.Value]{OID: o, Val: v})
		}
	}
	p := ask(t, r, reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetRequest, 0, 0, oids...))
	if p.Error != gosnmp.NoError || len(p.Variables) != len(wantEntries) {
		t.Fatalf("error %v, %d varbinds, want noError and %d", p.Error, len(p.Variables), len(wantEntries))
	}
	for i, e := range wantEntries {
		checkVarBind(t, p.Variables[i], e)
	}
}

func TestGetMissingV2c(t *testing.T) {
	r := newTestResponder(t, Config{})
	cases := []struct {
		oid  string
		want gosnmp.Asn1BER
	}{
		{base + ".1.1.1", gosnmp.NoSuchInstance},   // base.1.1 holds base.1.1.0
		{base + ".1.1.0.5", gosnmp.NoSuchInstance}, // under an existing entry
		{base + ".1.99.0", gosnmp.NoSuchObject},    // nothing under base.1.99
		{base + ".1", gosnmp.NoSuchObject},         // an inner node, no object: no instance of one
		{"1.3.6.1.2.1.1.1.0", gosnmp.NoSuchObject},
		{"0.0", gosnmp.NoSuchObject},
	}
	var oids []string
	for _, c := range cases {
		oids = append(oids, c.oid)
	}
	p := ask(t, r, reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetRequest, 0, 0, oids...))
	if p.Error != gosnmp.NoError || len(p.Variables) != len(cases) {
		t.Fatalf("error %v with %d varbinds", p.Error, len(p.Variables))
	}
	for i, c := range cases {
		if got := p.Variables[i]; got.Name != "."+c.oid || got.Type != c.want {
			t.Errorf("Get %s: %s %v, want %v", c.oid, got.Name, got.Type, c.want)
		}
	}
}

func TestGetV1NoSuchNameAndCounter64(t *testing.T) {
	r := newTestResponder(t, Config{})
	for _, c := range []struct {
		name  string
		oids  []string
		index int
	}{
		{"missing second", []string{base + ".1.1.0", base + ".1.99.0", base + ".1.2.0"}, 2},
		{"Counter64 third", []string{base + ".1.1.0", base + ".1.2.0", base + ".1.3.0"}, 3},
	} {
		req := reqPacket(t, gosnmp.Version1, "public", gosnmp.GetRequest, 0, 0, c.oids...)
		p := ask(t, r, req)
		if p.Error != gosnmp.NoSuchName || int(p.ErrorIndex) != c.index {
			t.Errorf("%s: %v index %d, want noSuchName index %d", c.name, p.Error, p.ErrorIndex, c.index)
		}
		// The request's varbinds come back unchanged.
		if len(p.Variables) != len(c.oids) {
			t.Fatalf("%s: %d varbinds echoed, want %d", c.name, len(p.Variables), len(c.oids))
		}
		for i, o := range c.oids {
			if p.Variables[i].Name != "."+o || p.Variables[i].Type != gosnmp.Null {
				t.Errorf("%s: echoed %s %v, want %s Null", c.name, p.Variables[i].Name, p.Variables[i].Type, o)
			}
		}
	}
	p := ask(t, r, reqPacket(t, gosnmp.Version1, "public", gosnmp.GetRequest, 0, 0, base+".1.1.0", base+".1.7.0"))
	if p.Error != gosnmp.NoError || gotValue(p.Variables[0]) != "-42" || gotValue(p.Variables[1]) != "7" {
		t.Errorf("v1 Get of Integer32 and Counter32: %v %v", p.Error, p.Variables)
	}
	if c := r.Stats().Snapshot(); c.OutNoSuchNames != 2 || c.InGetRequests != 3 || c.OutGetResponses != 3 {
		t.Errorf("counters %+v", c)
	}
}

// TestV1ErrorIndexAbove255 needs the own encoder: gosnmp's is a uint8.
func TestV1ErrorIndexAbove255(t *testing.T) {
	r := newTestResponder(t, Config{MaxMsgSize: MaxMsgSizeCap})
	var oids []string
	for i := 1; i <= rows; i++ {
		oids = append(oids, rowOID(i))
	}
	for i := 0; i < 99; i++ {
		oids = append(oids, base+".1.1.0")
	}
	oids = append(oids, base+".1.99.0") // number 300
	var s scratch
	out := r.handle(reqPacket(t, gosnmp.Version1, "public", gosnmp.GetRequest, 0, 0, oids...), &s)
	if out == nil {
		t.Fatalf("dropped: %v", s.why)
	}
	_, status, index, n := header(t, out)
	if status != int64(gosnmp.NoSuchName) || index != 300 || n != 300 {
		t.Errorf("status %d index %d varbinds %d, want noSuchName at 300 of 300", status, index, n)
	}
}

func TestGetNext(t *testing.T) {
	r := newTestResponder(t, Config{})
	last := dotted(oid(base).Append(3, 1, 0))
	v2 := ask(t, r, reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetNextRequest, 0, 0,
		base, base+".1.2.0", base+".2.200.0", last, "1.3.6.1.2.1"))
	entries := fixtureEntries()
	byOID := map[string]asn1tree.Entry[asn1tree.Value]{}
	for _, e := range entries {
		byOID[dotted(e.OID)] = e
	}
	if v2.Error != gosnmp.NoError || len(v2.Variables) != 5 {
		t.Fatalf("v2c GetNext: %v, %d varbinds", v2.Error, len(v2.Variables))
	}
	checkVarBind(t, v2.Variables[0], byOID["."+base+".1.1.0"])
	checkVarBind(t, v2.Variables[1], byOID["."+base+".1.3.0"]) // Counter64 is fine in v2c
	checkVarBind(t, v2.Variables[2], byOID[last])
	if got := v2.Variables[3]; got.Name != last || got.Type != gosnmp.EndOfMibView {
		t.Errorf("GetNext past the end: %s %v, want %s endOfMibView", got.Name, got.Type, last)
	}
	checkVarBind(t, v2.Variables[4], byOID["."+base+".1.1.0"])

	// v1 skips Counter64: from .1.2.0 over .1.3.0 to .1.4.0, and from
	// .1.7.0 over .1.8.0 and .1.9.0 to .1.10.0.
	v1 := ask(t, r, reqPacket(t, gosnmp.Version1, "public", gosnmp.GetNextRequest, 0, 0, base+".1.2.0", base+".1.7.0"))
	if v1.Error != gosnmp.NoError {
		t.Fatalf("v1 GetNext: %v", v1.Error)
	}
	checkVarBind(t, v1.Variables[0], byOID["."+base+".1.4.0"])
	checkVarBind(t, v1.Variables[1], byOID["."+base+".1.10.0"])

	// The last entry is a Counter64, so v1 ends after the last row.
	end := ask(t, r, reqPacket(t, gosnmp.Version1, "public", gosnmp.GetNextRequest, 0, 0, base+".1.1.0", rowOID(rows)))
	if end.Error != gosnmp.NoSuchName || end.ErrorIndex != 2 {
		t.Errorf("v1 GetNext past the end: %v index %d, want noSuchName index 2", end.Error, end.ErrorIndex)
	}
}

func TestTooBig(t *testing.T) {
	r := newTestResponder(t, Config{MaxMsgSize: MinMsgSize})
	var oids []string
	for i := 1; i <= 8; i++ { // 8 rows of 60 bytes cannot fit in 484
		oids = append(oids, rowOID(i))
	}
	for _, c := range []struct {
		ver gosnmp.SnmpVersion
		typ gosnmp.PDUType
		req []string
	}{
		{gosnmp.Version2c, gosnmp.GetRequest, oids},
		{gosnmp.Version1, gosnmp.GetRequest, oids},
		{gosnmp.Version2c, gosnmp.GetNextRequest, oids},
	} {
		var s scratch
		out := r.handle(reqPacket(t, c.ver, "public", c.typ, 0, 0, c.req...), &s)
		if out == nil {
			t.Fatalf("%v %v: dropped (%v)", c.ver, c.typ, s.why)
		}
		if _, status, index, n := header(t, out); status != int64(gosnmp.TooBig) || index != 0 || n != 0 {
			t.Errorf("%v %v: status %d index %d with %d varbinds, want tooBig 0 and none", c.ver, c.typ, status, index, n)
		}
	}
	// Five rows fit: the limit is not applied too early.
	p := ask(t, r, reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetRequest, 0, 0, oids[:5]...))
	if p.Error != gosnmp.NoError || len(p.Variables) != 5 {
		t.Errorf("5 rows: %v with %d varbinds", p.Error, len(p.Variables))
	}
	if c := r.Stats().Snapshot(); c.OutTooBigs != 3 {
		t.Errorf("OutTooBigs %d, want 3", c.OutTooBigs)
	}
}

func TestSetRefused(t *testing.T) {
	r := newTestResponder(t, Config{})
	for _, c := range []struct {
		ver  gosnmp.SnmpVersion
		want gosnmp.SNMPError
	}{{gosnmp.Version2c, gosnmp.NotWritable}, {gosnmp.Version1, gosnmp.NoSuchName}} {
		p := ask(t, r, reqPacket(t, c.ver, "public", gosnmp.SetRequest, 0, 0, base+".1.4.0", base+".1.1.0"))
		if p.Error != c.want || p.ErrorIndex != 1 || len(p.Variables) != 2 {
			t.Fatalf("%v Set: %v index %d, %d varbinds; want %v index 1 and the request's 2",
				c.ver, p.Error, p.ErrorIndex, len(p.Variables), c.want)
		}
		if v := p.Variables[0]; v.Type != gosnmp.OctetString || gotValue(v) != "x" {
			t.Errorf("%v Set: echoed %v %q, want the request's OctetString \"x\"", c.ver, v.Type, gotValue(v))
		}
	}
	// The tree is unchanged.
	p := ask(t, r, reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetRequest, 0, 0, base+".1.4.0"))
	if gotValue(p.Variables[0]) != "hello responder" {
		t.Errorf("after Set: %q", gotValue(p.Variables[0]))
	}
	if c := r.Stats().Snapshot(); c.InSetRequests != 2 || c.OutNotWritables != 1 || c.OutNoSuchNames != 1 {
		t.Errorf("counters %+v", c)
	}
}

func TestDropped(t *testing.T) {
	r := newTestResponder(t, Config{})
	good := reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetRequest, 0, 0, base+".1.1.0")
	v3 := append([]byte(nil), good...)
	v3[4] = 3 // version INTEGER's value: 30 len 02 01 <ver>
	trailing := append(append([]byte(nil), good...), 0)
	response := reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetResponse, 0, 0, base+".1.1.0")
	for _, c := range []struct {
		name string
		pkt  []byte
		want error
	}{
		{"wrong community", reqPacket(t, gosnmp.Version2c, "private", gosnmp.GetRequest, 0, 0, base+".1.1.0"), errCommunity},
		{"community prefix", reqPacket(t, gosnmp.Version2c, "publi", gosnmp.GetRequest, 0, 0, base+".1.1.0"), errCommunity},
		{"v3", v3, errVersion},
		{"truncated", good[:len(good)-1], errParse},
		{"trailing byte", trailing, errParse},
		{"empty", nil, errParse},
		{"v1 GetBulk", reqPacket(t, gosnmp.Version1, "public", gosnmp.GetBulkRequest, 0, 5, base), errParse},
		{"Response PDU", response, errNotRequest},
	} {
		var s scratch
		if out := r.handle(c.pkt, &s); out != nil || s.why != c.want {
			t.Errorf("%s: answered %d bytes, reason %v; want no answer, %v", c.name, len(out), s.why, c.want)
		}
	}
	c := r.Stats().Snapshot()
	want := Counts{InPkts: 8, InBadCommunityNames: 2, InBadVersions: 1, InASNParseErrs: 4, InNotRequests: 1}
	if c != want {
		t.Errorf("counters\n got %+v\nwant %+v", c, want)
	}
}

// TestNegativeRequestID: gosnmp would answer -1 as 4294967295.
func TestNegativeRequestID(t *testing.T) {
	r := newTestResponder(t, Config{})
	req := reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetRequest, 0, 0, base+".1.1.0")
	// gosnmp writes request-id 4242 as 02 02 10 92; make it 02 02 ff 6e (-146).
	i := indexOf(t, req, []byte{2, 2, 0x10, 0x92})
	req[i+2], req[i+3] = 0xff, 0x6e
	var s scratch
	out := r.handle(req, &s)
	if out == nil {
		t.Fatalf("dropped: %v", s.why)
	}
	if id, status, _, n := header(t, out); id != -146 || status != 0 || n != 1 {
		t.Errorf("request-id %d status %d varbinds %d, want -146, 0, 1", id, status, n)
	}
}

func indexOf(t *testing.T, b, sub []byte) int {
	t.Helper()
	for i := 0; i+len(sub) <= len(b); i++ {
		if string(b[i:i+len(sub)]) == string(sub) {
			return i
		}
	}
	t.Fatalf("% x not in % x", sub, b)
	return -1
}

func TestNilViewIsEmpty(t *testing.T) {
	r, err := New(Config{Community: "public"}, func() asn1tree.View { return nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := ask(t, r, reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetNextRequest, 0, 0, base))
	if p.Variables[0].Type != gosnmp.EndOfMibView {
		t.Errorf("GetNext on no view: %v", p.Variables[0].Type)
	}
}

func TestUnencodableValueIsGenErr(t *testing.T) {
	tr, err := asn1tree.Build([]asn1tree.Entry[asn1tree.Value]{
		{OID: oid(base + ".1.0"), Val: asn1tree.Int(1)},
		{OID: oid(base + ".2.0"), Val: asn1tree.Value{Kind: asn1tree.ObjectIdentifier, OID: asn1tree.OID{7}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Config{Community: "public"}, func() asn1tree.View { return tr }, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := ask(t, r, reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetNextRequest, 0, 0, base, base+".1.0"))
	if p.Error != gosnmp.GenErr || p.ErrorIndex != 2 || len(p.Variables) != 2 {
		t.Errorf("%v index %d with %d varbinds, want genErr index 2 and the 2 echoed", p.Error, p.ErrorIndex, len(p.Variables))
	}
}
