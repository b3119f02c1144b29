package responder

import (
	"testing"

	"github.com/gosnmp/gosnmp"
)

// benchHandle measures the request handler alone: decode, answer, encode.
func benchHandle(b *testing.B, req []byte, wantVarbinds int) {
	r := newTestResponder(b, Config{})
	var s scratch
	out := r.handle(req, &s)
	if out == nil {
		b.Fatalf("no answer: %v", s.why)
	}
	if p := checkResponse(b, r, req, out); p.Error != gosnmp.NoError || len(p.Variables) != wantVarbinds {
		b.Fatalf("%v with %d varbinds, want %d", p.Error, len(p.Variables), wantVarbinds)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(req) + len(out)))
	for b.Loop() {
		if r.handle(req, &s) == nil {
			b.Fatal("no answer")
		}
	}
}

func BenchmarkGetNext(b *testing.B) {
	benchHandle(b, reqPacket(b, gosnmp.Version2c, "public", gosnmp.GetNextRequest, 0, 0, base+".1.4.0"), 1)
}

// BenchmarkGetBulk asks for 30 varbinds of every kind except the long rows.
func BenchmarkGetBulk(b *testing.B) {
	benchHandle(b, reqPacket(b, gosnmp.Version2c, "public", gosnmp.GetBulkRequest, 0, 10,
		base+".1", base+".1.3.0", base+".1.6.0"), 30)
}

// BenchmarkGetBulkV3AuthPriv is BenchmarkGetBulk's request from a
// SHA-256/AES-128 user at authPriv: the digest check, decryption,
// encryption and signing on top (the response is a fresh salt each time).
func BenchmarkGetBulkV3AuthPriv(b *testing.B) {
	c := testCreds("bench", "SHA256", "AES")
	r, _ := v3Responder(b, testUser(b, c))
	req := v3Packet(b, c, 7, 0, gosnmp.GetBulkRequest, base+".1", base+".1.3.0", base+".1.6.0")
	var s scratch
	out := r.handle(req, &s)
	if out == nil {
		b.Fatalf("no answer: %v", s.why)
	}
	if p := decodeV3(b, c, out); p.PDUType != gosnmp.GetResponse || len(p.Variables) != 30 {
		b.Fatalf("%v with %d varbinds", p.PDUType, len(p.Variables))
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(req) + len(out)))
	for b.Loop() {
		if r.handle(req, &s) == nil {
			b.Fatal("no answer")
		}
	}
}

// BenchmarkRawUDPExchange is one exchange on loopback through the
// responder's raw socket calls: a client's request read, the reply sent
// and read by the client (0 allocations).
func BenchmarkRawUDPExchange(b *testing.B) {
	ex := newExchange(b, 60, 1000)
	b.ReportAllocs()
	for b.Loop() {
		ex.run()
	}
}
