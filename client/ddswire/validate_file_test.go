package ddswire_test

import (
	"testing"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/ddswire/ddswiretest"
	"github.com/perfagent/subagent/client/spmierr"
)

func TestValidateFileAccepts(t *testing.T) {
	b := ddswiretest.GoodFile()
	l, err := ddswire.ValidateFile(b, ddswiretest.GoodExpect(), ddswire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := ddswire.Layout{FileLen: ddswire.HeaderSize + 65536, AreaOff: ddswire.HeaderSize, AreaLen: 65536, PermLen: 32, Gen: ddswiretest.GuideInit().Generation, PID: 4242, Start: 987654, Batches: true}
	if l != want {
		t.Fatalf("layout %+v, want %+v", l, want)
	}
	// A minor-0 file (an older library) is read without batch counters.
	h0 := ddswire.DecodeHeader(b)
	h0.Minor = 0
	b0 := ddswiretest.Aligned(len(b))
	h0.Encode(b0)
	if l, err := ddswire.ValidateFile(b0, ddswiretest.GoodExpect(), ddswire.Limits{}); err != nil || l.Batches {
		t.Fatalf("minor 0: %+v, %v", l, err)
	}
	if a := l.Area(b); len(a) != 65536 || &a[0] != &b[ddswire.HeaderSize] || cap(a) != 65536 {
		t.Fatalf("area of %d bytes", len(a))
	}
	if l.Area(b[:1000]) != nil {
		t.Fatal("area of a shorter mapping")
	}
	// A tool without a registration skips the comparisons.
	if _, err := ddswire.ValidateFile(b, ddswire.Expect{}, ddswire.Limits{}); err != nil {
		t.Fatal(err)
	}
	// A longer header (a later minor version) and a page-rounded file.
	h := ddswire.DecodeHeader(b)
	h.Minor, h.HdrLen, h.AreaOff, h.AllocLen = 3, 512, 512, 512+65536+100
	b2 := ddswiretest.Aligned(int(h.AllocLen))
	h.Encode(b2)
	if l, err := ddswire.ValidateFile(b2, ddswiretest.GoodExpect(), ddswire.Limits{}); err != nil || l.AreaOff != 512 {
		t.Fatalf("%+v, %v", l, err)
	}
}

func TestValidateFileRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(h *ddswire.Header, b *[]byte, e *ddswire.Expect)
		sub  string
	}{
		{"empty", func(h *ddswire.Header, b *[]byte, e *ddswire.Expect) { *b = nil }, "0 bytes, shorter than the 256-byte header"},
		{"short", func(h *ddswire.Header, b *[]byte, e *ddswire.Expect) { *b = (*b)[:255] }, "255 bytes"},
		{"huge", func(h *ddswire.Header, b *[]byte, e *ddswire.Expect) {
			*b = ddswiretest.Aligned(ddswire.MaxHeader + 64<<20 + 8)
		}, "more than the"},
		{"magic", func(h *ddswire.Header, b *[]byte, e *ddswire.Expect) { h.Magic[0] = 's' }, "not a DDS shared file"},
		{"big-endian", func(h *ddswire.Header, b *[]byte, e *ddswire.Expect) { h.Major = 0x100 }, "big-endian"},
		{"major", func(h *ddswire.Header, b *[]byte, e *ddswire.Expect) { h.Major, h.Minor = 2, 0 }, "format version 2.0, this daemon reads 1.x"},
		{"header length small", func(h *ddswire.Header, b *[]byte, e *ddswire.Expect) { h.HdrLen = 248 }, "header length 248"},
		{"header length odd", func(h *ddswire.Header, b *[]byte, e *ddswire.Expect) { h.HdrLen = 260 }, "header length 260"},
		{"header length huge", func(h *ddswire.Header, b *[]byte, e *ddswire.Expect) { h.HdrLen = 8192 }, "header length 8192"},
		{"alloc length", func(h *ddswire.Header, b *[]byte, e *ddswire.Expect) { h.AllocLen += 8 }, "header says 65800 bytes, the file has 65792"},
		{"truncated file", func(h *ddswire.Header, b *[]byte, e *ddswire.Expect) { *b = (*b)[:4096] }, "the file has 4096"},
		{"area offset odd", func(h *ddswire.Header, b *[]byte, e *ddswire.Expect) { h.AreaOff = 260 }, "data area offset 260"},
		{"area inside header", func(h *ddswire.Header, b *[]byte, e *ddswire.Expect) { h.AreaOff = 128 }, "data area offset 128"},
		{"area length 0", func(h *ddswire.Header, b *[]byte, e *ddswire.Expect) { h.AreaLen = 0 }, "data area length 0"},
		{"area length odd", func(h *ddswire.Header, b *[]byte, e *ddswire.Expect) { h.AreaLen = 65535 }, "data area length 65535"},
		{"area over limit", func(h *ddswire.Header, b *[]byte, e *ddswire.Expect) { h.AreaLen = 64<<20 + 8 }, "more than the 67108864 allowed"},
		{"area past file", func(h *ddswire.Header, b *[]byte, e *ddswire.Expect) { h.AreaOff = 264 }, "ends past the 65792-byte file"},
		{"area offset wraps", func(h *ddswire.Header, b *[]byte, e *ddswire.Expect) { h.AreaOff = 0xfffffff8 }, "ends past"},
		{"perm odd", func(h *ddswire.Header, b *[]byte, e *ddswire.Expect) { h.PermLen = 31 }, "permanent length 31"},
		{"perm past area", func(h *ddswire.Header, b *[]byte, e *ddswire.Expect) { h.PermLen = 65544 }, "permanent length 65544"},
		{"unpublished", func(h *ddswire.Header, b *[]byte, e *ddswire.Expect) { h.Gen = 0 }, "never published"},
		{"stale generation", func(h *ddswire.Header, b *[]byte, e *ddswire.Expect) { h.Gen++ }, "stale or foreign"},
		{"area length lies", func(h *ddswire.Header, b *[]byte, e *ddswire.Expect) { e.AreaLen = 4096 }, "registration says 4096"},
		{"perm length lies", func(h *ddswire.Header, b *[]byte, e *ddswire.Expect) { e.PermLen = 64 }, "registration says 64"},
		{"other PID", func(h *ddswire.Header, b *[]byte, e *ddswire.Expect) { e.PID = 7 }, "the registering process is 7"},
		{"PID reused", func(h *ddswire.Header, b *[]byte, e *ddswire.Expect) { e.Start = 1 }, "PID reused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, e := ddswiretest.GoodFile(), ddswiretest.GoodExpect()
			h := ddswire.DecodeHeader(b)
			tc.edit(&h, &b, &e)
			if len(b) >= ddswire.HeaderSize {
				h.Encode(b)
			}
			_, err := ddswire.ValidateFile(b, e, ddswire.Limits{})
			ddswiretest.WantErr(t, err, spmierr.SiShmemFailed, "shared file: ", tc.sub)
		})
	}
}
