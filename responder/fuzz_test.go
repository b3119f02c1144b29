package responder

import (
	"bytes"
	"testing"

	"github.com/gosnmp/gosnmp"
)

// FuzzHandlePacket feeds arbitrary datagrams to the request handler: it
// must not panic, must give a reason for every drop, and every response
// must decode, fit the size limit, carry the request's id, and be the same
// when the scratch memory is reused.
func FuzzHandlePacket(f *testing.F) {
	rows := []string{rowOID(1), rowOID(2), rowOID(3), rowOID(4), rowOID(5), rowOID(6), rowOID(7), rowOID(8)}
	for _, v := range []gosnmp.SnmpVersion{gosnmp.Version1, gosnmp.Version2c} {
		for _, typ := range []gosnmp.PDUType{gosnmp.GetRequest, gosnmp.GetNextRequest, gosnmp.SetRequest, gosnmp.GetBulkRequest} {
			f.Add(reqPacket(f, v, "public", typ, 1, 5, base+".1.1.0", base+".1.3.0", base+".3.1.0"))
			f.Add(reqPacket(f, v, "public", typ, 0, 3, rows...))
		}
	}
	f.Add(reqPacket(f, gosnmp.Version2c, "wrong", gosnmp.GetRequest, 0, 0, base))
	f.Add(reqPacket(f, gosnmp.Version2c, "public", gosnmp.GetBulkRequest, 0, 300, base))
	f.Add([]byte{0x30, 0x03, 0x02, 0x01, 0x03})
	r := newTestResponder(f, Config{MaxMsgSize: MinMsgSize, MaxRepetitions: 20})
	f.Fuzz(func(t *testing.T, pkt []byte) {
		var s scratch
		out := r.handle(pkt, &s)
		if out == nil {
			if s.why == nil {
				t.Fatal("dropped without a reason")
			}
			return
		}
		checkWire(t, r, out)
		if id, _, _, _ := header(t, out); id != int64(s.req.id) {
			t.Fatalf("response id %d, request id %d", id, s.req.id)
		}
		first := append([]byte(nil), out...)
		if again := r.handle(pkt, &s); !bytes.Equal(first, again) {
			t.Fatalf("second answer differs:\n% x\n% x", first, again)
		}
	})
}
