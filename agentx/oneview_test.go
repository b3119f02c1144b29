package agentx

import (
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

// Every PDU is answered from one View: the view function hands out a new
// snapshot on each call (all its values equal to the call's number), and
// every varbind of a Get, GetNext or GetBulk response must carry the same
// number, one call per transaction.
func TestOnePDUOneView(t *testing.T) {
	calls := 0
	view := func() asn1tree.View {
		calls++
		var e []asn1tree.Entry[asn1tree.Value]
		for i := uint32(1); i <= 8; i++ {
			e = append(e, asn1tree.Entry[asn1tree.Value]{OID: b("5").Append(i, 0), Val: asn1tree.Counter(uint64(calls))})
		}
		tr, err := asn1tree.Build(e)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	r := newResponder(subtreeScope(testSubtrees...), view)
	var all []searchRange
	for i := uint32(1); i <= 8; i++ {
		all = append(all, searchRange{start: b("5").Append(i, 0), include: true})
	}
	for i, req := range []*packet{
		{header: header{version: 1, typ: typeGet}, ranges: all},
		{header: header{version: 1, typ: typeGetNext}, ranges: append([]searchRange{{start: asn1tree.MustParse(testBase)}}, all[:7]...)},
		{header: header{version: 1, typ: typeGetBulk}, maxRepetitions: 4,
			ranges: []searchRange{{start: asn1tree.MustParse(testBase)}, {start: all[1].start}}},
	} {
		req.transactionID, req.sessionID = uint32(100+i), 1
		before := calls
		var resp packet
		if !r.answer(req, &resp, 1, time.Now()) {
			t.Fatalf("%s: no Response", req.typ)
		}
		if calls != before+1 {
			t.Fatalf("%s: %d calls of the view function, want 1", req.typ, calls-before)
		}
		if resp.resError != NoError || len(resp.varbinds) != 8 {
			t.Fatalf("%s: %v, %d varbinds, want 8", req.typ, resp.resError, len(resp.varbinds))
		}
		for _, vb := range resp.varbinds {
			if vb.typ != vbCounter64 || vb.num != uint64(calls) {
				t.Fatalf("%s: %s is %v %d, from snapshot %d", req.typ, vb.name, vb.typ, vb.num, calls)
			}
		}
	}
}
