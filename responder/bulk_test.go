package responder

import (
	"strings"
	"testing"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/asn1tree"
)

// expectVB is one expected varbind: a fixture entry, or an exception.
type expectVB struct {
	name string
	exc  gosnmp.Asn1BER // 0: the fixture's value under name
}

func checkBulk(t *testing.T, p *gosnmp.SnmpPacket, want []expectVB) {
	t.Helper()
	byOID := map[string]asn1tree.Entry[asn1tree.Value]{}
	for _, e := range fixtureEntries() {
		byOID[dotted(e.OID)] = e
	}
	if p.Error != gosnmp.NoError || len(p.Variables) != len(want) {
		t.Fatalf("%v with %d varbinds, want noError with %d", p.Error, len(p.Variables), len(want))
	}
	for i, w := range want {
		got := p.Variables[i]
		if w.exc != 0 {
			if got.Name != w.name || got.Type != w.exc {
				t.Errorf("varbind %d: %s %v, want %s %v", i+1, got.Name, got.Type, w.name, w.exc)
			}
			continue
		}
		e, ok := byOID[w.name]
		if !ok {
			t.Fatalf("test bug: %s is not in the fixture", w.name)
		}
		checkVarBind(t, got, e)
	}
}

func TestGetBulkLayout(t *testing.T) {
	r := newTestResponder(t, Config{})
	last := "." + base + ".3.1.0"
	b := "." + base
	req := reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetBulkRequest, 2, 4,
		base+".1.1.0", last, base+".1.4.0", rowOID(198))
	checkBulk(t, ask(t, r, req), []expectVB{
		{name: b + ".1.2.0"}, {name: last, exc: gosnmp.EndOfMibView}, // non-repeaters
		{name: b + ".1.5.0"}, {name: b + ".2.199.0"},
		{name: b + ".1.6.0"}, {name: b + ".2.200.0"},
		{name: b + ".1.7.0"}, {name: last},
		// The ended repeater keeps its last name (RFC 3416 4.2.3).
		{name: b + ".1.8.0"}, {name: last, exc: gosnmp.EndOfMibView},
	})
}

func TestGetBulkStopsWhenAllEnded(t *testing.T) {
	r := newTestResponder(t, Config{})
	last := "." + base + ".3.1.0"
	checkBulk(t, ask(t, r, reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetBulkRequest, 0, 10, rowOID(rows))),
		[]expectVB{{name: last}, {name: last, exc: gosnmp.EndOfMibView}})
	checkBulk(t, ask(t, r, reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetBulkRequest, 0, 10, last)),
		[]expectVB{{name: last, exc: gosnmp.EndOfMibView}})
}

// TestGetBulkFieldClamping sends what gosnmp cannot: negative fields, which
// RFC 3416 4.2.3 treats as zero.
func TestGetBulkFieldClamping(t *testing.T) {
	r := newTestResponder(t, Config{})
	b := "." + base
	build := func(nonRep, maxRep byte) []byte {
		req := reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetBulkRequest, 1, 3, base+".1.1.0", base+".1.4.0")
		// request-id 02 02 10 92, non-repeaters 02 01 01, max-repetitions 02 01 03
		i := indexOf(t, req, []byte{2, 2, 0x10, 0x92, 2, 1, 1, 2, 1, 3})
		req[i+6], req[i+9] = nonRep, maxRep
		return req
	}
	checkBulk(t, ask(t, r, build(1, 3)), []expectVB{
		{name: b + ".1.2.0"}, {name: b + ".1.5.0"}, {name: b + ".1.6.0"}, {name: b + ".1.7.0"},
	})
	// non-repeaters -1: both repeat.
	checkBulk(t, ask(t, r, build(0xff, 2)), []expectVB{
		{name: b + ".1.2.0"}, {name: b + ".1.5.0"}, {name: b + ".1.3.0"}, {name: b + ".1.6.0"},
	})
	// max-repetitions -1: only the non-repeater.
	checkBulk(t, ask(t, r, build(1, 0xff)), []expectVB{{name: b + ".1.2.0"}})
	// non-repeaters above the number of varbinds: all are non-repeaters.
	checkBulk(t, ask(t, r, reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetBulkRequest, 200, 3, base+".1.1.0", base+".1.4.0")),
		[]expectVB{{name: b + ".1.2.0"}, {name: b + ".1.5.0"}})
}

func TestGetBulkCap(t *testing.T) {
	r := newTestResponder(t, Config{MaxRepetitions: 10, MaxMsgSize: MaxMsgSizeCap})
	p := ask(t, r, reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetBulkRequest, 0, 50, base))
	if len(p.Variables) != 10 {
		t.Errorf("1 repeater, cap 10: %d varbinds", len(p.Variables))
	}
	// 15 repeaters: the first repetition is whole despite the cap.
	var oids []string
	for i := 1; i <= 15; i++ {
		oids = append(oids, rowOID(i))
	}
	p = ask(t, r, reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetBulkRequest, 0, 50, oids...))
	if len(p.Variables) != 15 || p.Variables[14].Name != "."+rowOID(16) {
		t.Errorf("15 repeaters, cap 10: %d varbinds", len(p.Variables))
	}
	// max-repetitions 300 needs two octets; the default cap is 100.
	r = newTestResponder(t, Config{MaxMsgSize: MaxMsgSizeCap})
	p = ask(t, r, reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetBulkRequest, 0, 300, base))
	if len(p.Variables) != DefaultMaxRepetitions {
		t.Errorf("max-repetitions 300: %d varbinds, want %d", len(p.Variables), DefaultMaxRepetitions)
	}
}

func TestGetBulkTruncatedToSize(t *testing.T) {
	r := newTestResponder(t, Config{})
	req := reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetBulkRequest, 0, 100, base+".2")
	var s scratch
	out := r.handle(req, &s)
	p := checkResponse(t, r, req, out)
	// A row's varbind is under 80 bytes, so a fuller response would have fit.
	if len(out) <= DefaultMaxMsgSize-80 || len(p.Variables) == 0 || len(p.Variables) >= 100 {
		t.Fatalf("%d bytes with %d varbinds: not cut close to %d", len(out), len(p.Variables), DefaultMaxMsgSize)
	}
	for i, v := range p.Variables {
		if v.Name != "."+rowOID(i+1) || gotValue(v) != rowValue(i+1) {
			t.Fatalf("varbind %d: %s %q", i+1, v.Name, gotValue(v))
		}
	}
}

func TestGetBulkTooBig(t *testing.T) {
	r := newTestResponder(t, Config{MaxMsgSize: MinMsgSize})
	var oids []string
	for i := 1; i <= 8; i++ {
		oids = append(oids, rowOID(i))
	}
	var s scratch
	// Eight non-repeaters of 60-byte rows cannot fit into 484 bytes.
	out := r.handle(reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetBulkRequest, 8, 5, oids...), &s)
	if _, status, index, n := header(t, out); status != int64(gosnmp.TooBig) || index != 0 || n != 0 {
		t.Errorf("status %d index %d with %d varbinds, want tooBig", status, index, n)
	}
	// As repeaters they are cut instead.
	p := ask(t, r, reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetBulkRequest, 0, 5, oids...))
	if p.Error != gosnmp.NoError || len(p.Variables) == 0 || len(p.Variables) >= 8 {
		t.Errorf("8 repeaters in 484 bytes: %v with %d varbinds", p.Error, len(p.Variables))
	}

	// A single value bigger than the limit: no varbind fits at all.
	tr, err := asn1tree.Build([]asn1tree.Entry[asn1tree.Value]{{OID: oid(base + ".1.0"), Val: asn1tree.Str(strings.Repeat("z", 600))}})
	if err != nil {
		t.Fatal(err)
	}
	r, err = New(Config{Community: "public", MaxMsgSize: MinMsgSize}, func() asn1tree.View { return tr }, nil)
	if err != nil {
		t.Fatal(err)
	}
	out = r.handle(reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetBulkRequest, 0, 5, base), &s)
	if _, status, _, n := header(t, out); status != int64(gosnmp.TooBig) || n != 0 {
		t.Errorf("one oversized value: status %d with %d varbinds, want tooBig", status, n)
	}
}
