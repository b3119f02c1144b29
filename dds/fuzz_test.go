package dds

import (
	"bytes"
	"reflect"
	"testing"
)

var fuzzLimits = Limits{MaxFrame: 1 << 16, MaxContexts: 16, MaxTemplates: 4, MaxStats: 16, MaxStatsTotal: 64, MaxArea: 1 << 16}

// FuzzDecode feeds whole frames (head and body) to the decoder, then runs
// the registration checks on whatever decodes: neither may panic, and what
// decodes must survive a re-encode unchanged.
func FuzzDecode(f *testing.F) {
	for _, m := range []Message{guideInit(), &AddCx{Path: "DDS/IBM/Moretest/Bingo", Descr: "Dynamically added", ASN: 1},
		&AddCx{Ix: 1, Path: "DDS/IBM/Moretest/Bingo", Descr: "replayed", ASN: 1, Offset: 48},
		&AddCx{Path: "DDS/IBM/Bingo", Descr: "replayed at 0", ASN: 1, Flags: AddCxReplay},
		&DelCx{Offset: 32}, &Exit{}, &Reply{To: MsgAddCx, Value: 32}, &Reply{To: MsgInit, Errno: 193, Errmsg: "dup"}} {
		b, err := Marshal(m, fuzzLimits)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// An AddCx whose offset field is present but 0 (re-encoded without it).
	zero, _ := Marshal(&AddCx{Path: "DDS/IBM/x", ASN: 2}, fuzzLimits)
	zero = append(zero, 0, 0, 0, 0)
	le.PutUint32(zero, uint32(len(zero)-frameHead))
	f.Add(zero)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ReadMessage(bytes.NewReader(b), fuzzLimits)
		if err != nil {
			return
		}
		if a, ok := m.(*AddCx); ok && a.Requested() {
			// Any requested offset is granted or refused, never a panic.
			s := NewSlots(64, 1024)
			if err := s.AllocAt(a.Offset, a.ASN); err == nil && (a.Offset < 64 || a.Offset%8 != 0) {
				t.Fatalf("AllocAt granted offset %d", a.Offset)
			}
		}
		if in, ok := m.(*Init); ok {
			if v, err := CheckInit(in, fuzzLimits); err == nil {
				for i := range in.Templates {
					CheckAddCx(&AddCx{Ix: uint16(i), Path: v.Path() + "/x"}, in, v)
				}
			}
		}
		again, err := Marshal(m, fuzzLimits)
		if err != nil {
			t.Fatalf("decoded %+v but cannot encode it: %v", m, err)
		}
		m2, err := ReadMessage(bytes.NewReader(again), fuzzLimits)
		if err != nil || !reflect.DeepEqual(m, m2) {
			t.Fatalf("re-encode changed %+v into %+v (%v)", m, m2, err)
		}
	})
}

// FuzzValidateFile feeds arbitrary files to the header check and, when it
// passes, reads every field the area could hold: no panic, no read outside.
func FuzzValidateFile(f *testing.F) {
	f.Add(goodFile()[:HeaderSize+64], uint64(0), uint32(0))
	small := NewHeader(64, 16, 1, 2, "/f")
	small.Gen = 7
	b := make([]byte, small.AllocLen)
	small.Encode(b)
	f.Add(b, uint64(7), uint32(0x0108))
	f.Add([]byte(Magic), uint64(1), uint32(0))
	small.Batch, small.BatchEnd, small.Reading = 3, 2, 0xffffffff // a batch open, a stuck odd reader
	b = make([]byte, small.AllocLen)
	small.Encode(b)
	f.Add(b, uint64(7), uint32(0x0108))
	f.Fuzz(func(t *testing.T, data []byte, gen uint64, field uint32) {
		mem := aligned(len(data))
		copy(mem, data)
		exp := Expect{}
		if gen != 0 {
			h := decodeHeaderOrZero(mem)
			exp = Expect{Gen: gen, AreaLen: h.AreaLen, PermLen: h.PermLen}
		}
		l, err := ValidateFile(mem, exp, fuzzLimits)
		if err != nil {
			return
		}
		if uint64(l.AreaOff)+uint64(l.AreaLen) > uint64(len(mem)) || l.PermLen > l.AreaLen {
			t.Fatalf("accepted layout %+v for %d bytes", l, len(mem))
		}
		area := l.Area(mem)
		fld := Field{Off: field >> 8, Size: 1 << (field & 3), Type: DataType(field>>4) % (SiUnsign + 1), Present: SiLong}
		if v, err := ReadValue(area, fld); err == nil && fld.Check(l.AreaLen) != nil {
			t.Fatalf("read %v from unreadable %+v", v, fld)
		}
		LoadStamp(mem)
		LoadGoAway(mem)
		// Whatever the counters hold, a read ends; with nobody writing it
		// is consistent exactly when no batch is open.
		h := DecodeHeader(mem)
		copies := 0
		ok, err := ReadConsistent(mem, 0, func() error { copies++; return nil })
		if err != nil || ok != (h.Batch == h.BatchEnd) || copies > ReadCopies {
			t.Fatalf("counters %d/%d: ok %v after %d copies, %v", h.Batch, h.BatchEnd, ok, copies, err)
		}
		if r, _ := LoadReading(mem); r&1 != 0 || r == h.Reading {
			t.Fatalf("SiShReading %d after a read, was %d", r, h.Reading)
		}
	})
}

// decodeHeaderOrZero decodes a header, or returns zero for a short buffer.
func decodeHeaderOrZero(b []byte) Header {
	if len(b) < HeaderSize {
		return Header{}
	}
	return DecodeHeader(b)
}
