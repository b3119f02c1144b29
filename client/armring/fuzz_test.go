package armring

import (
	"bytes"
	"testing"
	"unsafe"
)

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

func FuzzDecodeHeader(f *testing.F) {
	g := Geometry{Slots: 16, Apps: 1, Trans: 1}
	b := make([]byte, HeaderLen)
	(&Header{Geometry: g, Gen: 1}).Encode(b)
	f.Add(b, g.FileLen())
	f.Add(b[:10], uint64(0))
	f.Fuzz(func(t *testing.T, b []byte, n uint64) {
		h, err := DecodeHeader(b, n)
		if err == nil && (h.FileLen() != n || h.Check() != nil) {
			t.Fatalf("accepted %+v for a %d-byte file", h, n)
		}
	})
}

func FuzzDecodeEntries(f *testing.F) {
	a := make([]byte, AppLen)
	EncodeApp(a, &App{ID: 1, Key: "App", Descr: "App one"})
	tr := make([]byte, TranLen)
	EncodeTran(tr, &Tran{ID: 2, Key: "T", Types: [7]uint32{1, 0, 0, 0, 0, 0, 10}, Names: [7]string{"n", "", "", "", "", "", "s"}})
	f.Add(a, tr)
	f.Fuzz(func(t *testing.T, a, tr []byte) {
		if app, err := DecodeApp(a); err == nil {
			b := make([]byte, AppLen)
			EncodeApp(b, &app)
			if got, err := DecodeApp(b); err != nil || got != app {
				t.Fatalf("app %+v does not round-trip: %+v %v", app, got, err)
			}
		}
		if x, err := DecodeTran(tr); err == nil {
			b := make([]byte, TranLen)
			EncodeTran(b, &x)
			if got, err := DecodeTran(b); err != nil || got != x {
				t.Fatalf("tran %+v does not round-trip: %+v %v", x, got, err)
			}
		}
	})
}

func FuzzDecodeRecord(f *testing.F) {
	b := make([]byte, RecordLen)
	(&Record{Tran: 1, Dur: 5, Mask: 1}).encode(b)
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeRecord(b)
		if err != nil {
			return
		}
		c := make([]byte, RecordLen)
		r.encode(c)
		if got, _ := DecodeRecord(c); got != r {
			t.Fatalf("record does not round-trip")
		}
	})
}

func FuzzDecodeMessages(f *testing.F) {
	f.Add((&Hello{Version: Version, PID: 3, Prog: "x"}).Marshal())
	f.Add((&Welcome{Gen: 1, Geometry: Geometry{Slots: 16, Apps: 1, Trans: 1}}).Marshal())
	f.Fuzz(func(t *testing.T, b []byte) {
		typ, body, err := ReadFrame(bytes.NewReader(b))
		if err != nil {
			return
		}
		switch typ {
		case MsgHello:
			if h, err := DecodeHello(body); err == nil && !bytes.Equal(h.Marshal()[8:], body) {
				t.Fatalf("Hello %+v does not re-encode to its body", h)
			}
		case MsgWelcome:
			if w, err := DecodeWelcome(body); err == nil && w.Status == 0 && w.Check() != nil {
				t.Fatalf("Welcome with a bad geometry accepted")
			}
		}
	})
}
