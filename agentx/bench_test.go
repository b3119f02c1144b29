package agentx

import (
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

// BenchmarkGetNextRoundTrip is the request hot path of the session reader:
// decode one GetNext (as net-snmp sends it during a bulk walk), answer it
// from the view and encode the Response, reusing the reader's buffers.
func BenchmarkGetNextRoundTrip(b *testing.B) {
	for _, n := range []int{1, 10} {
		b.Run(map[int]string{1: "1-range", 10: "10-ranges"}[n], func(b *testing.B) {
			benchGetNext(b, n)
		})
	}
}

func benchGetNext(bm *testing.B, n int) {
	r := newResponder(subtreeScope(testSubtrees...), testTree(bm))
	req := &packet{header: header{version: 1, typ: typeGetNext, flags: flagNetworkByteOrder, sessionID: 1, transactionID: 5, packetID: 9}}
	end := successor(asn1tree.MustParse(testBase))
	for i := 0; i < n; i++ {
		req.ranges = append(req.ranges, searchRange{start: b("20.1.2.1"), end: end})
	}
	wire, err := appendPacket(nil, req)
	if err != nil {
		bm.Fatal(err)
	}
	var (
		d         decoder
		in, resp  packet
		out       []byte
		now       = time.Now()
		h, _      = decodeHeader(wire)
		bodyBytes = wire[headerLen:]
	)
	bm.ReportAllocs()
	bm.SetBytes(int64(len(wire)))
	bm.ResetTimer()
	for i := 0; i < bm.N; i++ {
		in.header = h
		if err := d.body(&in, bodyBytes); err != nil {
			bm.Fatal(err)
		}
		r.answer(&in, &resp, 1, now)
		if out, err = appendPacket(out[:0], &resp); err != nil {
			bm.Fatal(err)
		}
	}
	bm.StopTimer()
	if len(resp.varbinds) != n || resp.varbinds[0].typ != vbInteger {
		bm.Fatalf("answer %s", vbStrings(resp.varbinds))
	}
}

// The reader answers a GetNext without allocating: a long session must not
// grow the heap or lean on the garbage collector per request.
func TestGetNextHotPathDoesNotAllocate(t *testing.T) {
	r := newResponder(subtreeScope(testSubtrees...), testTree(t))
	req := &packet{header: header{version: 1, typ: typeGetNext, flags: flagNetworkByteOrder, sessionID: 1, transactionID: 5},
		ranges: []searchRange{{start: b("20.1.2.1"), end: successor(asn1tree.MustParse(testBase))}, {start: b("4.0")}}}
	wire, _ := appendPacket(nil, req)
	h, _ := decodeHeader(wire)
	var (
		d        decoder
		in, resp packet
		out      []byte
		now      = time.Now()
	)
	allocs := testing.AllocsPerRun(200, func() {
		in.header = h
		if err := d.body(&in, wire[headerLen:]); err != nil {
			t.Fatal(err)
		}
		r.answer(&in, &resp, 1, now)
		out, _ = appendPacket(out[:0], &resp)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per GetNext", allocs)
	}
	if got := vbStrings(resp.varbinds); got != "20.1.2.2=Integer:22 5.0=TimeTicks:12345" {
		t.Errorf("answer %s", got)
	}
}
