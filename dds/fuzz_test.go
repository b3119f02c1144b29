package dds

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/ddswire/ddswiretest"
)

var fuzzLimits = ddswire.Limits{MaxFrame: 1 << 16, MaxContexts: 16, MaxTemplates: 4, MaxStats: 16, MaxStatsTotal: 64, MaxArea: 1 << 16}

// FuzzDecode feeds whole frames (head and body) to the decoder, then runs
// the registration checks on whatever decodes: neither may panic, and what
// decodes must survive a re-encode unchanged.
func FuzzDecode(f *testing.F) {
	for _, m := range []ddswire.Message{ddswiretest.GuideInit(), &ddswire.AddCx{Path: "DDS/IBM/Moretest/Bingo", Descr: "Dynamically added", ASN: 1},
		&ddswire.AddCx{Ix: 1, Path: "DDS/IBM/Moretest/Bingo", Descr: "replayed", ASN: 1, Offset: 48},
		&ddswire.AddCx{Path: "DDS/IBM/Bingo", Descr: "replayed at 0", ASN: 1, Flags: ddswire.AddCxReplay},
		&ddswire.DelCx{Offset: 32}, &ddswire.Exit{}, &ddswire.Reply{To: ddswire.MsgAddCx, Value: 32}, &ddswire.Reply{To: ddswire.MsgInit, Errno: 193, Errmsg: "dup"}} {
		b, err := ddswire.Marshal(m, fuzzLimits)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// An AddCx whose offset field is present but 0 (re-encoded without it).
	zero, _ := ddswire.Marshal(&ddswire.AddCx{Path: "DDS/IBM/x", ASN: 2}, fuzzLimits)
	zero = append(zero, 0, 0, 0, 0)
	ddswiretest.LE.PutUint32(zero, uint32(len(zero)-ddswiretest.FrameHead))
	f.Add(zero)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ddswire.ReadMessage(bytes.NewReader(b), fuzzLimits)
		if err != nil {
			return
		}
		if a, ok := m.(*ddswire.AddCx); ok && a.Requested() {
			// Any requested offset is granted or refused, never a panic.
			s := NewSlots(64, 1024)
			if err := s.AllocAt(a.Offset, a.ASN); err == nil && (a.Offset < 64 || a.Offset%8 != 0) {
				t.Fatalf("AllocAt granted offset %d", a.Offset)
			}
		}
		if in, ok := m.(*ddswire.Init); ok {
			if v, err := ddswire.CheckInit(in, fuzzLimits); err == nil {
				for i := range in.Templates {
					ddswire.CheckAddCx(&ddswire.AddCx{Ix: uint16(i), Path: v.Path() + "/x"}, in, v)
				}
			}
		}
		again, err := ddswire.Marshal(m, fuzzLimits)
		if err != nil {
			t.Fatalf("decoded %+v but cannot encode it: %v", m, err)
		}
		m2, err := ddswire.ReadMessage(bytes.NewReader(again), fuzzLimits)
		if err != nil || !reflect.DeepEqual(m, m2) {
			t.Fatalf("re-encode changed %+v into %+v (%v)", m, m2, err)
		}
	})
}

// FuzzValidateFile feeds arbitrary files to the header check and, when it
// passes, reads every field the area could hold: no panic, no read outside.
func FuzzValidateFile(f *testing.F) {
	f.Add(ddswiretest.GoodFile()[:ddswire.HeaderSize+64], uint64(0), uint32(0))
	small := ddswire.NewHeader(64, 16, 1, 2, "/f")
	small.Gen = 7
	b := make([]byte, small.AllocLen)
	small.Encode(b)
	f.Add(b, uint64(7), uint32(0x0108))
	f.Add([]byte(ddswire.Magic), uint64(1), uint32(0))
	small.Batch, small.BatchEnd, small.Reading = 3, 2, 0xffffffff // a batch open, a stuck odd reader
	b = make([]byte, small.AllocLen)
	small.Encode(b)
	f.Add(b, uint64(7), uint32(0x0108))
	f.Fuzz(func(t *testing.T, data []byte, gen uint64, field uint32) {
		mem := ddswiretest.Aligned(len(data))
		copy(mem, data)
		exp := ddswire.Expect{}
		if gen != 0 {
			h := decodeHeaderOrZero(mem)
			exp = ddswire.Expect{Gen: gen, AreaLen: h.AreaLen, PermLen: h.PermLen}
		}
		l, err := ddswire.ValidateFile(mem, exp, fuzzLimits)
		if err != nil {
			return
		}
		if uint64(l.AreaOff)+uint64(l.AreaLen) > uint64(len(mem)) || l.PermLen > l.AreaLen {
			t.Fatalf("accepted layout %+v for %d bytes", l, len(mem))
		}
		area := l.Area(mem)
		fld := ddswire.Field{Off: field >> 8, Size: 1 << (field & 3), Type: ddswire.DataType(field>>4) % (ddswire.SiUnsign + 1), Present: ddswire.SiLong}
		if v, err := ReadValue(area, fld); err == nil && fld.Check(l.AreaLen) != nil {
			t.Fatalf("read %v from unreadable %+v", v, fld)
		}
		ddswire.LoadStamp(mem)
		ddswire.LoadGoAway(mem)
		// Whatever the counters hold, a read ends; with nobody writing it
		// is consistent exactly when no batch is open.
		h := ddswire.DecodeHeader(mem)
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
func decodeHeaderOrZero(b []byte) ddswire.Header {
	if len(b) < ddswire.HeaderSize {
		return ddswire.Header{}
	}
	return ddswire.DecodeHeader(b)
}
