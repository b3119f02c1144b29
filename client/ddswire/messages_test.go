package ddswire_test

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/ddswire/ddswiretest"
	"github.com/perfagent/subagent/client/spmierr"
)

func roundTrip(t *testing.T, m ddswire.Message) ddswire.Message {
	t.Helper()
	b, err := ddswire.Marshal(m, ddswire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ddswire.ReadMessage(bytes.NewReader(b), ddswire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Fatalf("round trip of %s:\n got %+v\nwant %+v", m.Type(), got, m)
	}
	return got
}

func TestMessagesRoundTrip(t *testing.T) {
	in := ddswiretest.GuideInit()
	in.Contexts[1].Stats[0].Min = -5
	in.Contexts[1].InstFreq = ddswire.SiContInst
	for _, m := range []ddswire.Message{
		in,
		&ddswire.Init{Version: ddswire.ProtoMajor, AreaLen: 8, Generation: 1, File: "/x", Contexts: []ddswire.Cx{{Path: "DDS/a", ASN: 1}}},
		&ddswire.AddCx{Ix: 65535, Path: "DDS/IBM/Moretest/Bingo", Descr: "Dynamically added", ASN: 0xffffffff},
		&ddswire.AddCx{Ix: 1, Path: "DDS/IBM/Moretest/Bingo", ASN: 1, Offset: 0xfffffff8},
		&ddswire.DelCx{Offset: 4096},
		&ddswire.Exit{},
		&ddswire.Reply{To: ddswire.MsgInit, Value: 7},
		&ddswire.Reply{To: ddswire.MsgAddCx, Value: 32},
		&ddswire.Reply{To: ddswire.MsgDelCx, Errno: spmierr.SiNotFound, Errmsg: "no volatile context has its data area at offset 8"},
		&ddswire.Reply{To: ddswire.MsgExit, Errno: -1},
	} {
		roundTrip(t, m)
	}
}

// The requested offset is a trailing field: a body without it (what a
// library sends when it lets the daemon choose) decodes as before, and an
// explicit 0 means the same.
func TestAddCxOffsetOptional(t *testing.T) {
	old := body(uint16(2), "DDS/IBM/x", "d", uint32(7))
	want := &ddswire.AddCx{Ix: 2, Path: "DDS/IBM/x", Descr: "d", ASN: 7}
	for _, b := range [][]byte{old, append(old, body(uint32(0))...)} {
		m, err := ddswire.Decode(ddswire.MsgAddCx, b, ddswire.Limits{})
		if err != nil || !reflect.DeepEqual(m, want) {
			t.Fatalf("decoded %+v, %v", m, err)
		}
	}
	m, err := ddswire.Decode(ddswire.MsgAddCx, append(old, body(uint32(48))...), ddswire.Limits{})
	if err != nil || m.(*ddswire.AddCx).Offset != 48 {
		t.Fatalf("decoded %+v, %v", m, err)
	}
	// Encoding: the field only when an offset is asked for.
	for off, n := range map[uint32]int{0: len(old), 48: len(old) + 4} {
		w := *want
		w.Offset = off
		b, err := ddswire.Marshal(&w, ddswire.Limits{})
		if err != nil || len(b) != ddswiretest.FrameHead+n {
			t.Fatalf("offset %d: %d bytes (%v), want %d", off, len(b), err, ddswiretest.FrameHead+n)
		}
		if w.Requested() != (off != 0) {
			t.Fatalf("offset %d: Requested %v", off, w.Requested())
		}
	}
	// Offset 0 asked for by a replay: both trailing fields.
	w := *want
	w.Flags = ddswire.AddCxReplay
	b, err := ddswire.Marshal(&w, ddswire.Limits{})
	if err != nil || len(b) != ddswiretest.FrameHead+len(old)+8 || !w.Requested() {
		t.Fatalf("replay of offset 0: %d bytes (%v), requested %v", len(b), err, w.Requested())
	}
	if m := roundTrip(t, &w).(*ddswire.AddCx); m.Offset != 0 || m.Flags != ddswire.AddCxReplay {
		t.Fatalf("decoded %+v", m)
	}
}

func TestReplyFromError(t *testing.T) {
	r := ddswire.NewReply(ddswire.MsgAddCx.ReplyTo(), 0, spmierr.Errorf(spmierr.SiDuplicate, "context %q exists", "DDS/IBM/x"))
	if r.To != ddswire.MsgAddCx || r.Type() != ddswire.MsgAddCx.ReplyTo() || r.Errno != spmierr.SiDuplicate || r.Errmsg != `context "DDS/IBM/x" exists` {
		t.Fatalf("reply %+v", r)
	}
	if !errors.Is(r.Err(), &spmierr.Error{Code: spmierr.SiDuplicate}) {
		t.Fatalf("Err() = %v", r.Err())
	}
	if r := ddswire.NewReply(ddswire.MsgExit, 0, nil); r.Errno != 0 || r.Errmsg != "" || r.Err() != nil {
		t.Fatalf("success reply %+v", r)
	}
	long := ddswire.NewReply(ddswire.MsgInit, 0, errors.New(strings.Repeat("é", 600)))
	if long.Errno != spmierr.SiOtherErr || len(long.Errmsg) > ddswire.MaxErrmsg || !strings.HasSuffix(long.Errmsg, "é") {
		t.Fatalf("long message: code %v, %d bytes", long.Errno, len(long.Errmsg))
	}
	roundTrip(t, long)
}

func TestMsgTypeNames(t *testing.T) {
	for typ, want := range map[ddswire.MsgType]string{
		ddswire.MsgInit: "Init", ddswire.MsgAddCx.ReplyTo(): "AddCxReply", ddswire.MsgExit: "Exit", 0: "MsgType(0x0)", 0x85: "MsgType(0x85)", 0x181: "MsgType(0x181)",
	} {
		if got := typ.String(); got != want {
			t.Errorf("%#x: %q, want %q", uint16(typ), got, want)
		}
	}
}

// body encodes a frame body from pieces: []byte, uint8/16/32/64, strings
// with their 16-bit length.
func body(parts ...any) []byte {
	var b []byte
	for _, p := range parts {
		switch v := p.(type) {
		case []byte:
			b = append(b, v...)
		case uint8:
			b = append(b, v)
		case uint16:
			b = ddswiretest.LE.AppendUint16(b, v)
		case uint32:
			b = ddswiretest.LE.AppendUint32(b, v)
		case uint64:
			b = ddswiretest.LE.AppendUint64(b, v)
		case int:
			b = ddswiretest.LE.AppendUint32(b, uint32(v))
		case string:
			b = ddswiretest.LE.AppendUint16(b, uint16(len(v)))
			b = append(b, v...)
		default:
			panic(p)
		}
	}
	return b
}

func stat(name string) []byte {
	return body(name, "", uint64(0), uint64(100), uint8(0), uint8(1), uint8(0), uint32(1), uint32(8), uint32(0))
}

func cx(path string, nstats int, stats ...[]byte) []byte {
	b := body(path, "", uint32(2), uint32(0), uint8(0), nstats)
	for _, s := range stats {
		b = append(b, s...)
	}
	return b
}

func initBody(ncx int, cxs ...[]byte) []byte {
	b := body(uint16(1), uint16(0), uint32(4096), uint32(8), uint64(1), "/tmp/f", ncx)
	for _, c := range cxs {
		b = append(b, c...)
	}
	return b
}

func TestDecodeRejects(t *testing.T) {
	lim := ddswire.Limits{MaxContexts: 2, MaxTemplates: 1, MaxStats: 2, MaxStatsTotal: 3}
	good := append(initBody(1, cx("DDS/a", 1, stat("s"))), body(0)...)
	if _, err := ddswire.Decode(ddswire.MsgInit, good, lim); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		typ  ddswire.MsgType
		body []byte
		code spmierr.Code
		subs []string
	}{
		{"empty Init", ddswire.MsgInit, nil, spmierr.SiBadArgument, []string{"Init: version", "truncated"}},
		{"version", ddswire.MsgInit, body(uint16(2), "anything at all"), spmierr.SiInitFailed, []string{"protocol version 2"}},
		{"flags", ddswire.MsgInit, body(uint16(1), uint16(4)), spmierr.SiBadArgument, []string{"flags", "reserved"}},
		{"file too long", ddswire.MsgInit, body(uint16(1), uint16(0), uint32(8), uint32(0), uint64(1), strings.Repeat("f", 4096)), spmierr.SiBadArgument, []string{"file: 4096 bytes, at most 4095"}},
		{"file truncated", ddswire.MsgInit, body(uint16(1), uint16(0), uint32(8), uint32(0), uint64(1), uint16(10), []byte("abc")), spmierr.SiBadArgument, []string{"file: truncated: 10 bytes needed, 3 left"}},
		{"too many contexts", ddswire.MsgInit, initBody(3), spmierr.SiBadArgument, []string{"contexts: 3 entries, at most 2"}},
		{"lying context count", ddswire.MsgInit, initBody(2, cx("DDS/a", 0)), spmierr.SiBadArgument, []string{"2 entries cannot fit"}},
		{"huge context count", ddswire.MsgInit, initBody(-1), spmierr.SiBadArgument, []string{"4294967295 entries"}},
		{"path too long", ddswire.MsgInit, initBody(1, cx(strings.Repeat("p", 64), 0)), spmierr.SiBadArgument, []string{"context 0: path: 64 bytes, at most 63"}},
		{"too many stats", ddswire.MsgInit, initBody(1, cx("DDS/a", 3)), spmierr.SiBadArgument, []string{"statistics: 3 entries, at most 2"}},
		{"lying stat count", ddswire.MsgInit, initBody(1, cx("DDS/a", 2, stat("s"))), spmierr.SiBadArgument, []string{"2 entries cannot fit"}},
		{"stats in all", ddswire.MsgInit, initBody(2, cx("DDS/a", 2, stat("s"), stat("t")), cx("DDS/a/b", 2, stat("s"), stat("t"))), spmierr.SiBadArgument, []string{"4 in all", "at most 3"}},
		{"stat name too long", ddswire.MsgInit, initBody(1, cx("DDS/a", 1, stat(strings.Repeat("n", 32)))), spmierr.SiBadArgument, []string{"context 0: statistic 0: name: 32 bytes, at most 31"}},
		{"stat descr too long", ddswire.MsgInit, initBody(1, cx("DDS/a", 1, body("n", strings.Repeat("d", 64)))), spmierr.SiBadArgument, []string{"statistic 0: description: 64 bytes, at most 63"}},
		{"stat truncated", ddswire.MsgInit, initBody(1, cx("DDS/a", 1, stat("s")[:30])), spmierr.SiBadArgument, []string{"statistic", "cannot fit"}},
		{"templates missing", ddswire.MsgInit, initBody(1, cx("DDS/a", 0)), spmierr.SiBadArgument, []string{"templates count: truncated"}},
		{"too many templates", ddswire.MsgInit, append(initBody(1, cx("DDS/a", 0)), body(2)...), spmierr.SiBadArgument, []string{"templates: 2 entries, at most 1"}},
		{"template stat", ddswire.MsgInit, append(initBody(1, cx("DDS/a", 0)), append(body(1), cx("T", 1, stat(strings.Repeat("x", 40)))...)...), spmierr.SiBadArgument, []string{"template 0: statistic 0: name: 40 bytes"}},
		{"trailing bytes", ddswire.MsgInit, append(good, 0), spmierr.SiBadArgument, []string{"1 bytes after the end"}},
		{"AddCx truncated", ddswire.MsgAddCx, body(uint16(0), "DDS/a/b"), spmierr.SiBadArgument, []string{"AddCx: description length: truncated"}},
		{"AddCx path", ddswire.MsgAddCx, body(uint16(0), strings.Repeat("p", 64)), spmierr.SiBadArgument, []string{"AddCx: path: 64 bytes"}},
		{"AddCx offset short", ddswire.MsgAddCx, body(uint16(0), "p", "d", uint32(1), uint16(32)), spmierr.SiBadArgument, []string{"AddCx: offset: truncated: 4 bytes needed, 2 left"}},
		{"AddCx flags unknown", ddswire.MsgAddCx, body(uint16(0), "p", "d", uint32(1), uint32(32), uint32(0x21)), spmierr.SiBadArgument, []string{"AddCx: flags", "unknown flags 0x20"}},
		{"AddCx flags short", ddswire.MsgAddCx, body(uint16(0), "p", "d", uint32(1), uint32(32), uint16(1)), spmierr.SiBadArgument, []string{"AddCx: flags: truncated"}},
		{"AddCx long", ddswire.MsgAddCx, body(uint16(0), "p", "d", uint32(1), uint32(0), uint32(1), uint32(0)), spmierr.SiBadArgument, []string{"AddCx: 4 bytes after the end"}},
		{"AddCx descr", ddswire.MsgAddCx, body(uint16(0), "p", strings.Repeat("d", 64)), spmierr.SiBadArgument, []string{"AddCx: description: 64 bytes"}},
		{"DelCx short", ddswire.MsgDelCx, body(uint16(0)), spmierr.SiBadArgument, []string{"DelCx: offset: truncated"}},
		{"DelCx long", ddswire.MsgDelCx, body(uint64(0)), spmierr.SiBadArgument, []string{"4 bytes after the end"}},
		{"Exit with body", ddswire.MsgExit, []byte{0}, spmierr.SiBadArgument, []string{"Exit: 1 bytes after"}},
		{"reply reserved", ddswire.MsgInit.ReplyTo(), body(uint32(0), uint32(1), uint64(0), ""), spmierr.SiBadArgument, []string{"reserved"}},
		{"reply message", ddswire.MsgInit.ReplyTo(), body(uint32(0), uint32(0), uint64(0), strings.Repeat("m", 1024)), spmierr.SiBadArgument, []string{"error message: 1024 bytes"}},
		{"reply short", ddswire.MsgExit.ReplyTo(), body(uint32(0)), spmierr.SiBadArgument, []string{"ExitReply: reserved: truncated"}},
		{"unknown type", 9, nil, spmierr.SiBadArgument, []string{"unknown message type 0x9"}},
		{"unknown reply", 0x89, nil, spmierr.SiBadArgument, []string{"unknown message type 0x89"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ddswire.Decode(tc.typ, tc.body, lim)
			if m != nil {
				t.Fatalf("decoded %+v", m)
			}
			ddswiretest.WantErr(t, err, tc.code, tc.subs...)
		})
	}
}

func TestMarshalRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    ddswire.Message
		lim  ddswire.Limits
		sub  string
	}{
		{"stat name", &ddswire.Init{Contexts: []ddswire.Cx{{Path: "DDS/a", Stats: []ddswire.Stat{{Name: strings.Repeat("n", 32)}}}}}, ddswire.Limits{}, "Init: context 0: statistic 0: name: 32 bytes"},
		{"path", &ddswire.AddCx{Path: strings.Repeat("p", 64)}, ddswire.Limits{}, "AddCx: path: 64 bytes"},
		{"contexts", &ddswire.Init{Contexts: make([]ddswire.Cx, 3)}, ddswire.Limits{MaxContexts: 2}, "Init: context: 3 entries, at most 2"},
		{"templates", &ddswire.Init{Templates: make([]ddswire.Cx, 3)}, ddswire.Limits{MaxTemplates: 2}, "Init: template: 3 entries"},
		{"stats", &ddswire.Init{Contexts: []ddswire.Cx{{Stats: make([]ddswire.Stat, 3)}}}, ddswire.Limits{MaxStats: 2}, "Init: context 0: statistics: 3 entries"},
		{"stats in all", &ddswire.Init{Contexts: []ddswire.Cx{{Stats: make([]ddswire.Stat, 2)}}, Templates: []ddswire.Cx{{Stats: make([]ddswire.Stat, 2)}}}, ddswire.Limits{MaxStatsTotal: 3}, "4 statistics in all"},
		{"frame", &ddswire.Init{File: "/" + strings.Repeat("f", 4000)}, ddswire.Limits{MaxFrame: 1024}, "Init is 4031 bytes, at most 1024"},
		{"reply to nothing", &ddswire.Reply{}, ddswire.Limits{}, "type MsgType(0x80)"},
		{"errmsg", &ddswire.Reply{To: ddswire.MsgInit, Errmsg: strings.Repeat("m", 1024)}, ddswire.Limits{}, "error message: 1024 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ddswire.Marshal(tc.m, tc.lim)
			ddswiretest.WantErr(t, err, spmierr.SiBadArgument, tc.sub)
		})
	}
}

func TestReadFrame(t *testing.T) {
	frame := func(n uint32, typ, res uint16, rest ...byte) []byte {
		b := ddswiretest.LE.AppendUint32(nil, n)
		b = ddswiretest.LE.AppendUint16(b, typ)
		b = ddswiretest.LE.AppendUint16(b, res)
		return append(b, rest...)
	}
	if _, _, err := ddswire.ReadFrame(bytes.NewReader(nil), ddswire.Limits{}); err != io.EOF {
		t.Fatalf("empty stream: %v, want io.EOF", err)
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want error
		sub  string
	}{
		{"partial head", frame(4, 4, 0)[:5], io.ErrUnexpectedEOF, ""},
		{"partial body", frame(4, 3, 0, 1, 2), io.ErrUnexpectedEOF, ""},
		{"reserved", frame(0, 4, 1), nil, "reserved field is 1"},
		{"unknown type", frame(0, 5, 0), nil, "unknown message type 0x5"},
		{"too long", frame(1025, 1, 0), nil, "Init of 1025 bytes, at most 1024"},
		{"huge", frame(0xffffffff, 1, 0), nil, "4294967295 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ddswire.ReadFrame(bytes.NewReader(tc.in), ddswire.Limits{MaxFrame: 1024})
			if tc.want != nil {
				if err != tc.want {
					t.Fatalf("got %v, want %v", err, tc.want)
				}
				return
			}
			ddswiretest.WantErr(t, err, spmierr.SiBadArgument, tc.sub)
		})
	}
	// Two messages back to back on one stream, read one at a time.
	var buf bytes.Buffer
	for _, m := range []ddswire.Message{&ddswire.DelCx{Offset: 8}, &ddswire.Exit{}} {
		if err := ddswire.WriteMessage(&buf, m, ddswire.Limits{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []ddswire.MsgType{ddswire.MsgDelCx, ddswire.MsgExit} {
		m, err := ddswire.ReadMessage(&buf, ddswire.Limits{})
		if err != nil || m.Type() != want {
			t.Fatalf("got %v, %v; want %s", m, err, want)
		}
	}
	if _, err := ddswire.ReadMessage(&buf, ddswire.Limits{}); err != io.EOF {
		t.Fatalf("after the last frame: %v", err)
	}
}

func TestLimitsNorm(t *testing.T) {
	l, err := ddswire.Limits{}.Norm()
	if err != nil || l != ddswire.DefaultLimits {
		t.Fatalf("zero limits: %+v, %v", l, err)
	}
	if _, err := (ddswire.Limits{MaxTemplates: 70000}).Norm(); err == nil || !strings.Contains(err.Error(), "MaxTemplates = 70000") {
		t.Fatalf("MaxTemplates: %v", err)
	}
	if _, err := (ddswire.Limits{MaxArea: 12}).Norm(); err == nil || !strings.Contains(err.Error(), "MaxArea = 12") {
		t.Fatalf("MaxArea: %v", err)
	}
	if _, err := (ddswire.Limits{MaxStats: -1}).Norm(); err == nil {
		t.Fatal("negative MaxStats accepted")
	}
	// The codecs clamp instead of failing.
	if n := (ddswire.Limits{MaxTemplates: 70000, MaxArea: 12, MaxStats: -1}).Clamped(); n.MaxTemplates != 65536 || n.MaxArea != 8 || n.MaxStats != 1 {
		t.Fatalf("clamped %+v", n)
	}
	if got := (ddswire.Limits{MaxArea: 1 << 20}).MaxFileLen(); got != ddswire.MaxHeader+1<<20 {
		t.Fatalf("MaxFileLen %d", got)
	}
}
