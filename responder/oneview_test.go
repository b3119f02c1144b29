package responder

import (
	"fmt"
	"testing"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/asn1tree"
)

// Every PDU is answered from one View: the view function hands out a new
// snapshot on each call (all its values equal to the call's number), and
// every varbind of a Get, GetNext or GetBulk response must carry the same
// number, one call per request.
func TestOnePDUOneView(t *testing.T) {
	b := oid(base)
	calls := 0
	view := func() asn1tree.View {
		calls++
		var e []asn1tree.Entry[asn1tree.Value]
		for i := uint32(1); i <= 8; i++ {
			e = append(e, asn1tree.Entry[asn1tree.Value]{OID: b.Append(5, i, 0), Val: asn1tree.Counter(uint64(calls))})
		}
		tr, err := asn1tree.Build(e)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	r, err := New(Config{Community: "public", Listen: "127.0.0.1:0"}, view, nil)
	if err != nil {
		t.Fatal(err)
	}
	all := make([]string, 8)
	for i := range all {
		all[i] = fmt.Sprintf("%s.5.%d.0", base, i+1)
	}
	for _, tc := range []struct {
		name string
		typ  gosnmp.PDUType
		rep  uint32
		oids []string
		n    int
	}{
		{"Get", gosnmp.GetRequest, 0, all, 8},
		{"GetNext", gosnmp.GetNextRequest, 0, append([]string{base}, all[:7]...), 8},
		{"GetBulk", gosnmp.GetBulkRequest, 4, []string{base, all[1]}, 8},
	} {
		before := calls
		p := ask(t, r, reqPacket(t, gosnmp.Version2c, "public", tc.typ, 0, tc.rep, tc.oids...))
		if calls != before+1 {
			t.Fatalf("%s: %d calls of the view function, want 1", tc.name, calls-before)
		}
		if p.Error != gosnmp.NoError || len(p.Variables) != tc.n {
			t.Fatalf("%s: %v, %d varbinds, want %d", tc.name, p.Error, len(p.Variables), tc.n)
		}
		for _, v := range p.Variables {
			if got := gosnmp.ToBigInt(v.Value).Uint64(); got != uint64(calls) {
				t.Fatalf("%s: %s from snapshot %d, the request's is %d", tc.name, v.Name, got, calls)
			}
		}
	}
}
