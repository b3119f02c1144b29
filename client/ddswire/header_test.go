package ddswire_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/ddswire/ddswiretest"
)

func sampleHeader() ddswire.Header {
	h := ddswire.NewHeader(65536, 32, 4242, 987654, "/etc/SpmiSupl_hook")
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
	b := make([]byte, ddswire.HeaderSize)
	h.Encode(b)
	if got := ddswire.DecodeHeader(b); !reflect.DeepEqual(got, h) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", got, h)
	}
	if string(b[:8]) != ddswire.Magic || b[ddswire.OffMajor] != ddswire.FileMajor || ddswiretest.LE.Uint32(b[ddswire.OffHdrLen:]) != ddswire.HeaderSize {
		t.Fatalf("head bytes % x", b[:16])
	}
	if h.FileName() != "/etc/SpmiSupl_hook" {
		t.Fatalf("file name %q", h.FileName())
	}
	long := ddswire.NewHeader(8, 0, 1, 0, "/"+strings.Repeat("x", 100))
	if n := long.FileName(); len(n) != ddswire.LenName-1 || long.Name[ddswire.LenName-1] != 0 {
		t.Fatalf("long name kept %d bytes", len(n))
	}
}
