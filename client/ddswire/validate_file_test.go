package ddswire

import (
	"testing"

	"github.com/perfagent/subagent/client/spmierr"
)

// goodFile is a published file for guideInit's registration.
func goodFile() []byte {
	in := guideInit()
	h := NewHeader(in.AreaLen, in.PermLen, 4242, 987654, in.File)
	h.Gen = in.Generation
	b := aligned(int(h.AllocLen))
	h.Encode(b)
	return b
}

func goodExpect() Expect { return ExpectFor(guideInit(), 4242, 987654) }

func TestValidateFileAccepts(t *testing.T) {
	b := goodFile()
	l, err := ValidateFile(b, goodExpect(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := Layout{FileLen: HeaderSize + 65536, AreaOff: HeaderSize, AreaLen: 65536, PermLen: 32, Gen: guideInit().Generation, PID: 4242, Start: 987654, Batches: true}
	if l != want {
		t.Fatalf("layout %+v, want %+v", l, want)
	}
	// A minor-0 file (an older library) is read without batch counters.
	h0 := DecodeHeader(b)
	h0.Minor = 0
	b0 := aligned(len(b))
	h0.Encode(b0)
	if l, err := ValidateFile(b0, goodExpect(), Limits{}); err != nil || l.Batches {
		t.Fatalf("minor 0: %+v, %v", l, err)
	}
	if a := l.Area(b); len(a) != 65536 || &a[0] != &b[HeaderSize] || cap(a) != 65536 {
		t.Fatalf("area of %d bytes", len(a))
	}
	if l.Area(b[:1000]) != nil {
		t.Fatal("area of a shorter mapping")
	}
	// A tool without a registration skips the comparisons.
	if _, err := ValidateFile(b, Expect{}, Limits{}); err != nil {
		t.Fatal(err)
	}
	// A longer header (a later minor version) and a page-rounded file.
	h := DecodeHeader(b)
	h.Minor, h.HdrLen, h.AreaOff, h.AllocLen = 3, 512, 512, 512+65536+100
	b2 := aligned(int(h.AllocLen))
	h.Encode(b2)
	if l, err := ValidateFile(b2, goodExpect(), Limits{}); err != nil || l.AreaOff != 512 {
		t.Fatalf("%+v, %v", l, err)
	}
}

func TestValidateFileRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(h *Header, b *[]byte, e *Expect)
		sub  string
	}{
		{"empty", func(h *Header, b *[]byte, e *Expect) { *b = nil }, "0 bytes, shorter than the 256-byte header"},
		{"short", func(h *Header, b *[]byte, e *Expect) { *b = (*b)[:255] }, "255 bytes"},
		{"huge", func(h *Header, b *[]byte, e *Expect) { *b = aligned(MaxHeader + 64<<20 + 8) }, "more than the"},
		{"magic", func(h *Header, b *[]byte, e *Expect) { h.Magic[0] = 's' }, "not a DDS shared file"},
		{"big-endian", func(h *Header, b *[]byte, e *Expect) { h.Major = 0x100 }, "big-endian"},
		{"major", func(h *Header, b *[]byte, e *Expect) { h.Major, h.Minor = 2, 0 }, "format version 2.0, this daemon reads 1.x"},
		{"header length small", func(h *Header, b *[]byte, e *Expect) { h.HdrLen = 248 }, "header length 248"},
		{"header length odd", func(h *Header, b *[]byte, e *Expect) { h.HdrLen = 260 }, "header length 260"},
		{"header length huge", func(h *Header, b *[]byte, e *Expect) { h.HdrLen = 8192 }, "header length 8192"},
		{"alloc length", func(h *Header, b *[]byte, e *Expect) { h.AllocLen += 8 }, "header says 65800 bytes, the file has 65792"},
		{"truncated file", func(h *Header, b *[]byte, e *Expect) { *b = (*b)[:4096] }, "the file has 4096"},
		{"area offset odd", func(h *Header, b *[]byte, e *Expect) { h.AreaOff = 260 }, "data area offset 260"},
		{"area inside header", func(h *Header, b *[]byte, e *Expect) { h.AreaOff = 128 }, "data area offset 128"},
		{"area length 0", func(h *Header, b *[]byte, e *Expect) { h.AreaLen = 0 }, "data area length 0"},
		{"area length odd", func(h *Header, b *[]byte, e *Expect) { h.AreaLen = 65535 }, "data area length 65535"},
		{"area over limit", func(h *Header, b *[]byte, e *Expect) { h.AreaLen = 64<<20 + 8 }, "more than the 67108864 allowed"},
		{"area past file", func(h *Header, b *[]byte, e *Expect) { h.AreaOff = 264 }, "ends past the 65792-byte file"},
		{"area offset wraps", func(h *Header, b *[]byte, e *Expect) { h.AreaOff = 0xfffffff8 }, "ends past"},
		{"perm odd", func(h *Header, b *[]byte, e *Expect) { h.PermLen = 31 }, "permanent length 31"},
		{"perm past area", func(h *Header, b *[]byte, e *Expect) { h.PermLen = 65544 }, "permanent length 65544"},
		{"unpublished", func(h *Header, b *[]byte, e *Expect) { h.Gen = 0 }, "never published"},
		{"stale generation", func(h *Header, b *[]byte, e *Expect) { h.Gen++ }, "stale or foreign"},
		{"area length lies", func(h *Header, b *[]byte, e *Expect) { e.AreaLen = 4096 }, "registration says 4096"},
		{"perm length lies", func(h *Header, b *[]byte, e *Expect) { e.PermLen = 64 }, "registration says 64"},
		{"other PID", func(h *Header, b *[]byte, e *Expect) { e.PID = 7 }, "the registering process is 7"},
		{"PID reused", func(h *Header, b *[]byte, e *Expect) { e.Start = 1 }, "PID reused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, e := goodFile(), goodExpect()
			h := DecodeHeader(b)
			tc.edit(&h, &b, &e)
			if len(b) >= HeaderSize {
				h.Encode(b)
			}
			_, err := ValidateFile(b, e, Limits{})
			wantErr(t, err, spmierr.SiShmemFailed, "shared file: ", tc.sub)
		})
	}
}
