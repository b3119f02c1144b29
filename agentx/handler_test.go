package agentx

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

const testBase = "1.3.6.1.4.1.32473.1"

var testSubtrees = []asn1tree.OID{asn1tree.MustParse(testBase)}

// subtreeScope is the scope of plain subtree registrations.
func subtreeScope(subtrees ...asn1tree.OID) *scope {
	regs := make([]Registration, len(subtrees))
	for i, s := range subtrees {
		regs[i] = Registration{Subtree: s}
	}
	return newScope(regs)
}

func b(suffix string) asn1tree.OID { return asn1tree.MustParse(testBase + "." + suffix) }

// testTree is a small view under testBase, with an entry on each side of
// it and one NoValue entry that must never be served.
func testTree(t testing.TB) func() asn1tree.View {
	t.Helper()
	entries := []asn1tree.Entry[asn1tree.Value]{
		{OID: asn1tree.MustParse("1.3.6.1.4.1.32473.0.5"), Val: asn1tree.Int(-1)},
		{OID: b("1.0"), Val: asn1tree.Counter(1 << 40)},
		{OID: b("2.0"), Val: asn1tree.Gauge(42)},
		{OID: b("3.0"), Val: asn1tree.Int(-7)},
		{OID: b("4.0"), Val: asn1tree.Str("hello")},
		{OID: b("5.0"), Val: asn1tree.Value{Kind: asn1tree.TimeTicks, Num: 12345}},
		{OID: b("6.0"), Val: asn1tree.Value{Kind: asn1tree.ObjectIdentifier, OID: asn1tree.MustParse("1.3.6.1.4.1.32473")}},
		{OID: b("7.0"), Val: asn1tree.Value{Kind: asn1tree.Counter32, Num: 99}},
		{OID: b("8.0"), Val: asn1tree.Value{Kind: asn1tree.NoValue}},
		{OID: b("9.0"), Val: asn1tree.Int(9)},
		{OID: b("10.0"), Val: asn1tree.Int(10)},
		{OID: b("20.1.2.1"), Val: asn1tree.Int(21)},
		{OID: b("20.1.2.2"), Val: asn1tree.Int(22)},
		{OID: b("20.1.2.3"), Val: asn1tree.Int(23)},
		{OID: b("20.1.3.1"), Val: asn1tree.Str("r1")},
		{OID: b("20.1.3.2"), Val: asn1tree.Str("r2")},
		{OID: b("20.1.3.3"), Val: asn1tree.Str("r3")},
		{OID: asn1tree.MustParse("1.3.6.1.4.1.32473.2.1.0"), Val: asn1tree.Int(2)},
	}
	tree, err := asn1tree.Build(entries)
	if err != nil {
		t.Fatal(err)
	}
	return func() asn1tree.View { return tree }
}

// served lists the entries of testTree a walk of testBase must return.
var served = []string{"1.0", "2.0", "3.0", "4.0", "5.0", "6.0", "7.0", "9.0", "10.0",
	"20.1.2.1", "20.1.2.2", "20.1.2.3", "20.1.3.1", "20.1.3.2", "20.1.3.3"}

func newTestResponder(t testing.TB) *responder {
	return newResponder(subtreeScope(testSubtrees...), testTree(t))
}

// ask answers req as session 1 would and returns the Response.
func ask(t *testing.T, r *responder, req *packet) *packet {
	t.Helper()
	if req.sessionID == 0 {
		req.sessionID = 1
	}
	var resp packet
	if !r.answer(req, &resp, 1, time.Now()) {
		t.Fatalf("%s got no Response", req.typ)
	}
	return &resp
}

// vbString renders a VarBind as "suffix=Type:value", the suffix relative
// to testBase when it is below it.
func vbString(v varbind) string {
	name := v.name.String()
	if rest, ok := strings.CutPrefix(name, testBase+"."); ok {
		name = rest
	}
	switch v.typ {
	case vbInteger:
		return fmt.Sprintf("%s=Integer:%d", name, int64(v.num))
	case vbOctetString:
		return fmt.Sprintf("%s=OctetString:%s", name, v.str)
	case vbOID:
		return fmt.Sprintf("%s=OID:%s", name, v.oid)
	case vbNoSuchObject, vbNoSuchInstance, vbEndOfMibView, vbNull:
		return fmt.Sprintf("%s=%s", name, v.typ)
	}
	return fmt.Sprintf("%s=%s:%d", name, v.typ, v.num)
}

func vbStrings(vbs []varbind) string {
	s := make([]string, len(vbs))
	for i, v := range vbs {
		s[i] = vbString(v)
	}
	return strings.Join(s, " ")
}

func getNext(ranges ...searchRange) *packet {
	return &packet{header: header{version: 1, typ: typeGetNext, transactionID: 1}, ranges: ranges}
}

func TestGetTypesAndExceptions(t *testing.T) {
	r := newTestResponder(t)
	req := &packet{header: header{version: 1, typ: typeGet}, ranges: []searchRange{
		{start: b("1.0")}, {start: b("2.0")}, {start: b("3.0")}, {start: b("4.0")}, {start: b("5.0")},
		{start: b("6.0")}, {start: b("7.0")},
		{start: b("8.0")},      // NoValue in the view: never served
		{start: b("20.1.2.9")}, // column exists, row does not
		{start: b("99.0")},     // nothing there
		{start: asn1tree.MustParse("1.3.6.1.4.1.32473.2.1.0")}, // in the view, outside our subtree
		{start: nil},
	}}
	resp := ask(t, r, req)
	want := "1.0=Counter64:1099511627776 2.0=Gauge32:42 3.0=Integer:-7 4.0=OctetString:hello 5.0=TimeTicks:12345 " +
		"6.0=OID:1.3.6.1.4.1.32473 7.0=Counter32:99 8.0=noSuchInstance 20.1.2.9=noSuchInstance 99.0=noSuchObject " +
		"1.3.6.1.4.1.32473.2.1.0=noSuchObject =noSuchObject"
	if got := vbStrings(resp.varbinds); got != want || resp.resError != NoError {
		t.Errorf("Get answered %v\n %s\nwant\n %s", resp.resError, got, want)
	}
}

func TestGetNextSearchRanges(t *testing.T) {
	r := newTestResponder(t)
	cases := []struct {
		name string
		sr   searchRange
		want string
	}{
		{"inclusive root, as net-snmp sends for a request preceding us",
			searchRange{start: asn1tree.MustParse(testBase), include: true, end: asn1tree.MustParse("1.3.6.1.4.1.32473.2")}, "1.0=Counter64:1099511627776"},
		{"include returns the start itself", searchRange{start: b("3.0"), include: true}, "3.0=Integer:-7"},
		{"exclusive skips the start", searchRange{start: b("3.0")}, "4.0=OctetString:hello"},
		{"numeric order: 9 before 10", searchRange{start: b("9.0")}, "10.0=Integer:10"},
		{"NoValue entries are skipped", searchRange{start: b("7.0")}, "9.0=Integer:9"},
		{"end bound excludes an entry at end", searchRange{start: b("3.0"), end: b("4.0")}, "3.0=endOfMibView"},
		{"end bound keeps an entry below end", searchRange{start: b("3.0"), end: b("4.0.1")}, "4.0=OctetString:hello"},
		{"last entry", searchRange{start: b("20.1.3.3")}, "20.1.3.3=endOfMibView"},
		{"null end stays inside the registered subtree", searchRange{start: b("20.1.3.3")}, "20.1.3.3=endOfMibView"},
		{"start before our subtree", searchRange{start: asn1tree.MustParse("1.3.6.1.4.1.32473.0")}, "1.0=Counter64:1099511627776"},
		{"start after our subtree", searchRange{start: asn1tree.MustParse("1.3.6.1.4.1.32473.2")}, "1.3.6.1.4.1.32473.2=endOfMibView"},
		{"end before start", searchRange{start: b("9.0"), end: b("2.0")}, "9.0=endOfMibView"},
		{"into a table column", searchRange{start: b("20.1.2")}, "20.1.2.1=Integer:21"},
		{"from a column's last row to the next column", searchRange{start: b("20.1.2.3")}, "20.1.3.1=OctetString:r1"},
	}
	for _, c := range cases {
		resp := ask(t, r, getNext(c.sr))
		if got := vbStrings(resp.varbinds); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

// A walk by repeated exclusive GetNext returns every served entry once, in
// strictly increasing order, then endOfMibView.
func TestGetNextWalk(t *testing.T) {
	r := newTestResponder(t)
	start, include := asn1tree.MustParse(testBase), true
	var got []string
	for i := 0; i < 100; i++ {
		resp := ask(t, r, getNext(searchRange{start: start, include: include, end: successor(asn1tree.MustParse(testBase))}))
		vb := resp.varbinds[0]
		if vb.typ == vbEndOfMibView {
			break
		}
		if asn1tree.Compare(vb.name, start) <= 0 {
			t.Fatalf("walk went backwards: %s after %s", vb.name, start)
		}
		got = append(got, strings.TrimPrefix(vb.name.String(), testBase+"."))
		start, include = vb.name, false
	}
	if strings.Join(got, " ") != strings.Join(served, " ") {
		t.Errorf("walk returned\n %v\nwant\n %v", got, served)
	}
}

func TestGetBulk(t *testing.T) {
	r := newTestResponder(t)
	bulk := func(nonRep, maxRep uint16, ranges ...searchRange) string {
		resp := ask(t, r, &packet{header: header{version: 1, typ: typeGetBulk}, nonRepeaters: nonRep, maxRepetitions: maxRep, ranges: ranges})
		return vbStrings(resp.varbinds)
	}
	cases := []struct{ name, got, want string }{
		{"one non-repeater, two repeaters, three rows",
			bulk(1, 3, searchRange{start: b("1.0")}, searchRange{start: b("20.1.2")}, searchRange{start: b("20.1.3")}),
			"2.0=Gauge32:42 " +
				"20.1.2.1=Integer:21 20.1.3.1=OctetString:r1 " +
				"20.1.2.2=Integer:22 20.1.3.2=OctetString:r2 " +
				"20.1.2.3=Integer:23 20.1.3.3=OctetString:r3"},
		{"a repeater past the end repeats endOfMibView; a full row of them ends the answer",
			bulk(0, 10, searchRange{start: b("20.1.2.2")}, searchRange{start: b("20.1.3.2")}),
			"20.1.2.3=Integer:23 20.1.3.3=OctetString:r3 " +
				"20.1.3.1=OctetString:r1 20.1.3.3=endOfMibView " +
				"20.1.3.2=OctetString:r2 20.1.3.3=endOfMibView " +
				"20.1.3.3=OctetString:r3 20.1.3.3=endOfMibView " +
				"20.1.3.3=endOfMibView 20.1.3.3=endOfMibView"},
		{"end bound holds on every repetition",
			bulk(0, 5, searchRange{start: b("1.0"), end: b("3.0")}),
			"2.0=Gauge32:42 2.0=endOfMibView"},
		{"max-repetitions 0 answers only the non-repeaters",
			bulk(1, 0, searchRange{start: b("1.0")}, searchRange{start: b("2.0")}), "2.0=Gauge32:42"},
		{"non-repeaters beyond the ranges are all non-repeaters",
			bulk(7, 3, searchRange{start: b("1.0")}, searchRange{start: b("2.0")}), "2.0=Gauge32:42 3.0=Integer:-7"},
		{"include on the first repetition only",
			bulk(0, 2, searchRange{start: b("9.0"), include: true}), "9.0=Integer:9 10.0=Integer:10"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s:\n got  %s\n want %s", c.name, c.got, c.want)
		}
	}
}

// A huge max-repetitions is cut to what fits maxVarBinds.
func TestGetBulkBounded(t *testing.T) {
	entries := make([]asn1tree.Entry[asn1tree.Value], 5000)
	for i := range entries {
		entries[i] = asn1tree.Entry[asn1tree.Value]{OID: b(fmt.Sprintf("30.%d", i+1)), Val: asn1tree.Str(strings.Repeat("x", 40))}
	}
	tree, _ := asn1tree.Build(entries)
	r := newResponder(subtreeScope(testSubtrees...), func() asn1tree.View { return tree })
	resp := ask(t, r, &packet{header: header{version: 1, typ: typeGetBulk}, maxRepetitions: 65535, ranges: []searchRange{{start: b("30")}}})
	if n := len(resp.varbinds); n == 0 || n > maxVarBinds {
		t.Fatalf("%d VarBinds", n)
	}
	out, err := appendPacket(nil, resp)
	if err != nil || len(out)-headerLen > maxPayload {
		t.Fatalf("bulk answer of %d bytes does not fit: %v", len(out), err)
	}
}

func TestSetAndOtherPDUs(t *testing.T) {
	r := newTestResponder(t)
	set := &packet{header: header{version: 1, typ: typeTestSet}, varbinds: []varbind{
		{typ: vbInteger, name: b("3.0"), num: 5}, {typ: vbOctetString, name: b("4.0"), str: "x"}}}
	cases := []struct {
		req   *packet
		code  ErrorCode
		index uint16
	}{
		{set, NotWritable, 1},
		{&packet{header: header{version: 1, typ: typeTestSet}}, NoError, 0},
		{&packet{header: header{version: 1, typ: typeCommitSet}}, CommitFailed, 0},
		{&packet{header: header{version: 1, typ: typeUndoSet}}, NoError, 0},
		{&packet{header: header{version: 1, typ: typePing}}, NoError, 0},
		{&packet{header: header{version: 1, typ: typeRegister}, subtree: b("1")}, GenErr, 0},
		{&packet{header: header{version: 1, typ: typeNotify}}, GenErr, 0},
		{&packet{header: header{version: 1, typ: typeGet, sessionID: 99}, ranges: []searchRange{{start: b("1.0")}}}, NotOpen, 0},
		{&packet{header: header{version: 1, typ: typeGetNext, flags: flagNonDefaultContext}, context: "other"}, UnsupportedContext, 0},
	}
	for _, c := range cases {
		resp := ask(t, r, c.req)
		if resp.resError != c.code || resp.resIndex != c.index || len(resp.varbinds) != 0 {
			t.Errorf("%s answered %s index %d with %d VarBinds, want %s index %d", c.req.typ, resp.resError, resp.resIndex, len(resp.varbinds), c.code, c.index)
		}
	}
	var resp packet
	if r.answer(&packet{header: header{version: 1, typ: typeCleanupSet, sessionID: 1}}, &resp, 1, time.Now()) {
		t.Error("CleanupSet got a Response; RFC 2741 7.2.4.4 says none")
	}
}

func TestResponseEchoesHeader(t *testing.T) {
	r := newTestResponder(t)
	for _, flags := range []uint8{0, flagNetworkByteOrder, flagNetworkByteOrder | flagInstanceRegistration} {
		req := &packet{header: header{version: 1, typ: typeGetNext, flags: flags, sessionID: 1, transactionID: 77, packetID: 88},
			ranges: []searchRange{{start: b("1.0")}, {start: b("2.0")}, {start: b("3.0")}}}
		resp := ask(t, r, req)
		if resp.typ != typeResponse || resp.sessionID != 1 || resp.transactionID != 77 || resp.packetID != 88 ||
			resp.flags != flags&flagNetworkByteOrder || len(resp.varbinds) != 3 {
			t.Errorf("flags %#x: response header %+v with %d VarBinds", flags, resp.header, len(resp.varbinds))
		}
	}
}

// Every PDU of one transaction sees one View; a new transaction loads anew.
func TestViewPerTransaction(t *testing.T) {
	tree := testTree(t)
	loads := 0
	r := newResponder(subtreeScope(testSubtrees...), func() asn1tree.View { loads++; return tree() })
	now := time.Now()
	for _, tid := range []uint32{5, 5, 5, 6, 5, 6} {
		var resp packet
		r.answer(&packet{header: header{version: 1, typ: typeGetNext, sessionID: 1, transactionID: tid}, ranges: []searchRange{{start: b("1")}}}, &resp, 1, now)
	}
	if loads != 2 {
		t.Errorf("view loaded %d times for 2 transactions", loads)
	}
	load := func(tid uint32, now time.Time) {
		var resp packet
		r.answer(&packet{header: header{version: 1, typ: typeGet, sessionID: 1, transactionID: tid}}, &resp, 1, now)
	}
	for tid := uint32(100); tid < 100+viewCacheSize+1; tid++ {
		load(tid, now)
	}
	before := loads
	load(5, now) // evicted by the newer transactions
	load(6, now.Add(viewCacheTTL))
	if loads != before+2 {
		t.Errorf("evicted or expired entries were served: %d loads, want %d", loads, before+2)
	}
}

func TestRegions(t *testing.T) {
	rs := subtreeScope(
		asn1tree.MustParse("1.3.6.1.4.1.32473.1.5"), asn1tree.MustParse("1.3.6.1.4.1.32473.1"),
		asn1tree.MustParse("1.3.6.1.4.1.32473.2"), asn1tree.MustParse("1.3.6.1.4.1.32473.4"),
		asn1tree.OID{4294967295},
	).spans
	var got []string
	for _, r := range rs {
		got = append(got, fmt.Sprintf("[%s,%s)", r.start, r.end))
	}
	want := "[1.3.6.1.4.1.32473.1,1.3.6.1.4.1.32473.3) [1.3.6.1.4.1.32473.4,1.3.6.1.4.1.32473.5) [4294967295,)"
	if strings.Join(got, " ") != want {
		t.Errorf("regions %v, want %s", got, want)
	}
}

// stuckView returns the same NoValue entry for every search: a broken View
// must not hang the reader.
type stuckView struct{}

func (stuckView) Get(asn1tree.OID) (asn1tree.Value, bool) { return asn1tree.Value{}, false }
func (stuckView) Search(asn1tree.OID, bool, asn1tree.OID) (asn1tree.OID, asn1tree.Value, bool) {
	return b("5.0"), asn1tree.Value{}, true
}

func TestBrokenViewDoesNotHang(t *testing.T) {
	r := newResponder(subtreeScope(testSubtrees...), func() asn1tree.View { return stuckView{} })
	done := make(chan string, 1)
	go func() { done <- vbStrings(ask(t, r, getNext(searchRange{start: b("1.0")})).varbinds) }()
	select {
	case got := <-done:
		if got != "1.0=endOfMibView" {
			t.Errorf("answered %s", got)
		}
	case <-time.After(ioTimeout):
		t.Fatal("GetNext on a View that never advances did not return")
	}
}
