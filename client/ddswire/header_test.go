package ddswire

import (
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

func sampleHeader() Header {
	h := NewHeader(65536, 32, 4242, 987654, "/etc/SpmiSupl_hook")
	h.Gen = 0x1234_5678_9abc_def0
	h.Area = 0x7f00_dead_b000
	copy(h.T[:], "0123456789abcdef")
	h.GoAway, h.Interval, h.Subscrib, h.PortNo = 1, 500, -3, 8080
	h.Batch, h.BatchEnd, h.Reading, h.Pad2 = 0xb1, 0xb0, 0x7, 0x9
	for i := range h.Res {
		h.Res[i] = uint64(i) << 40
	}
	return h
}

func TestHeaderRoundTrip(t *testing.T) {
	h := sampleHeader()
	b := make([]byte, HeaderSize)
	h.Encode(b)
	if got := DecodeHeader(b); !reflect.DeepEqual(got, h) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", got, h)
	}
	if string(b[:8]) != Magic || b[OffMajor] != FileMajor || le.Uint32(b[OffHdrLen:]) != HeaderSize {
		t.Fatalf("head bytes % x", b[:16])
	}
	if h.FileName() != "/etc/SpmiSupl_hook" {
		t.Fatalf("file name %q", h.FileName())
	}
	long := NewHeader(8, 0, 1, 0, "/"+strings.Repeat("x", 100))
	if n := long.FileName(); len(n) != LenName-1 || long.Name[LenName-1] != 0 {
		t.Fatalf("long name kept %d bytes", len(n))
	}
}

// The Go struct has the C layout on this GOARCH too (on 386 the Go
// compiler aligns uint64 to 4, which must not matter).
func TestHeaderStructMirrorsOffsets(t *testing.T) {
	var h Header
	for _, f := range []struct {
		name      string
		got, want uintptr
	}{
		{"Magic", unsafe.Offsetof(h.Magic), OffMagic},
		{"Major", unsafe.Offsetof(h.Major), OffMajor},
		{"Minor", unsafe.Offsetof(h.Minor), OffMinor},
		{"HdrLen", unsafe.Offsetof(h.HdrLen), OffHdrLen},
		{"AllocLen", unsafe.Offsetof(h.AllocLen), OffAllocLen},
		{"AreaOff", unsafe.Offsetof(h.AreaOff), OffAreaOff},
		{"AreaLen", unsafe.Offsetof(h.AreaLen), OffAreaLen},
		{"PermLen", unsafe.Offsetof(h.PermLen), OffPermLen},
		{"Gen", unsafe.Offsetof(h.Gen), OffGen},
		{"PID", unsafe.Offsetof(h.PID), OffPID},
		{"Flags", unsafe.Offsetof(h.Flags), OffFlags},
		{"Start", unsafe.Offsetof(h.Start), OffStart},
		{"Area", unsafe.Offsetof(h.Area), OffArea},
		{"T", unsafe.Offsetof(h.T), OffT},
		{"GoAway", unsafe.Offsetof(h.GoAway), OffGoAway},
		{"Interval", unsafe.Offsetof(h.Interval), OffInterval},
		{"Subscrib", unsafe.Offsetof(h.Subscrib), OffSubscrib},
		{"PortNo", unsafe.Offsetof(h.PortNo), OffPortNo},
		{"Pad", unsafe.Offsetof(h.Pad), OffPad},
		{"Name", unsafe.Offsetof(h.Name), OffName},
		{"Batch", unsafe.Offsetof(h.Batch), OffBatch},
		{"BatchEnd", unsafe.Offsetof(h.BatchEnd), OffBatchEnd},
		{"Reading", unsafe.Offsetof(h.Reading), OffReading},
		{"Pad2", unsafe.Offsetof(h.Pad2), OffPad2},
		{"Res", unsafe.Offsetof(h.Res), OffRes},
		{"size", unsafe.Sizeof(h), HeaderSize},
	} {
		if f.got != f.want {
			t.Errorf("%s at %d, constant says %d", f.name, f.got, f.want)
		}
	}
}
