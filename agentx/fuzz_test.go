package agentx

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"
	"time"
)

// allocated is the heap bytes f allocates: the least of three runs, as
// another goroutine may allocate meanwhile.
func allocated(f func()) uint64 {
	var least uint64
	var before, after runtime.MemStats
	for i := range 3 {
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; i == 0 || n < least {
			least = n
		}
	}
	return least
}

// FuzzDecode feeds arbitrary bytes to the decoder. Whatever decodes must
// encode again to something that decodes to the same PDU, and a request
// must get an answer that encodes (or is too big, which the session turns
// into tooBig).
func FuzzDecode(f *testing.F) {
	for _, v := range vectors {
		f.Add(unhex(f, v.wire))
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 40; i++ {
		b, err := appendPacket(nil, randPacket(r, i%2 == 0))
		if err == nil {
			f.Add(b)
		}
	}
	tree := testTree(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		// Work in proportion to the input, whatever its length fields
		// claim: bounded in bytes allocated, which load cannot change.
		if n := allocated(func() { decodePacket(b) }); n > 128*uint64(len(b))+8<<10 {
			t.Fatalf("decoding %d bytes allocated %d bytes", len(b), n)
		}
		p, err := decodePacket(b)
		if err != nil {
			return
		}
		again, err := appendPacket(nil, p)
		if err != nil {
			t.Fatalf("decoded %s does not encode: %v", p.typ, err)
		}
		q, err := decodePacket(again)
		if err != nil {
			t.Fatalf("re-encoded %s does not decode: %v", p.typ, err)
		}
		// An uncompressed 1.3.6.1.X OID comes back compressed: only the
		// length may differ.
		p.payloadLen, q.payloadLen = 0, 0
		if !reflect.DeepEqual(normalize(p), normalize(q)) {
			t.Fatalf("round trip changed the PDU:\n%+v\n%+v", *p, *q)
		}
		rsp := newResponder(subtreeScope(testSubtrees...), tree)
		var resp packet
		if rsp.answer(p, &resp, p.sessionID, time.Now()) {
			if _, err := appendPacket(nil, &resp); err != nil && !errors.Is(err, errPayloadTooBig) {
				t.Fatalf("answer to %s does not encode: %v", p.typ, err)
			}
			if resp.resError == NoError && (p.typ == typeGet || p.typ == typeGetNext) && len(resp.varbinds) != len(p.ranges) {
				t.Fatalf("%s with %d ranges answered with %d VarBinds", p.typ, len(p.ranges), len(resp.varbinds))
			}
		}
	})
}
