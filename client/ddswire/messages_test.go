package ddswire

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/perfagent/subagent/client/spmierr"
)

func roundTrip(t *testing.T, m Message) Message {
	t.Helper()
	b, err := Marshal(m, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadMessage(bytes.NewReader(b), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Fatalf("round trip of %s:\n got %+v\nwant %+v", m.Type(), got, m)
	}
	return got
}

func TestMessagesRoundTrip(t *testing.T) {
	in := guideInit()
	in.Contexts[1].Stats[0].Min = -5
	in.Contexts[1].InstFreq = SiContInst
	for _, m := range []Message{
		in,
		&Init{Version: ProtoMajor, AreaLen: 8, Generation: 1, File: "/x", Contexts: []Cx{{Path: "DDS/a", ASN: 1}}},
		&AddCx{Ix: 65535, Path: "DDS/IBM/Moretest/Bingo", Descr: "Dynamically added", ASN: 0xffffffff},
		&AddCx{Ix: 1, Path: "DDS/IBM/Moretest/Bingo", ASN: 1, Offset: 0xfffffff8},
		&DelCx{Offset: 4096},
		&Exit{},
		&Reply{To: MsgInit, Value: 7},
		&Reply{To: MsgAddCx, Value: 32},
		&Reply{To: MsgDelCx, Errno: spmierr.SiNotFound, Errmsg: "no volatile context has its data area at offset 8"},
		&Reply{To: MsgExit, Errno: -1},
	} {
		roundTrip(t, m)
	}
}

// The requested offset is a trailing field: a body without it (what a
// library sends when it lets the daemon choose) decodes as before, and an
// explicit 0 means the same.
func TestAddCxOffsetOptional(t *testing.T) {
	old := body(uint16(2), "DDS/IBM/x", "d", uint32(7))
	want := &AddCx{Ix: 2, Path: "DDS/IBM/x", Descr: "d", ASN: 7}
	for _, b := range [][]byte{old, append(old, body(uint32(0))...)} {
		m, err := Decode(MsgAddCx, b, Limits{})
		if err != nil || !reflect.DeepEqual(m, want) {
			t.Fatalf("decoded %+v, %v", m, err)
		}
	}
	m, err := Decode(MsgAddCx, append(old, body(uint32(48))...), Limits{})
	if err != nil || m.(*AddCx).Offset != 48 {
		t.Fatalf("decoded %+v, %v", m, err)
	}
	// Encoding: the field only when an offset is asked for.
	for off, n := range map[uint32]int{0: len(old), 48: len(old) + 4} {
		w := *want
		w.Offset = off
		b, err := Marshal(&w, Limits{})
		if err != nil || len(b) != frameHead+n {
			t.Fatalf("offset %d: %d bytes (%v), want %d", off, len(b), err, frameHead+n)
		}
		if w.Requested() != (off != 0) {
			t.Fatalf("offset %d: Requested %v", off, w.Requested())
		}
	}
	// Offset 0 asked for by a replay: both trailing fields.
	w := *want
	w.Flags = AddCxReplay
	b, err := Marshal(&w, Limits{})
	if err != nil || len(b) != frameHead+len(old)+8 || !w.Requested() {
		t.Fatalf("replay of offset 0: %d bytes (%v), requested %v", len(b), err, w.Requested())
	}
	if m := roundTrip(t, &w).(*AddCx); m.Offset != 0 || m.Flags != AddCxReplay {
		t.Fatalf("decoded %+v", m)
	}
}

func TestReplyFromError(t *testing.T) {
	r := NewReply(MsgAddCx.ReplyTo(), 0, spmierr.Errorf(spmierr.SiDuplicate, "context %q exists", "DDS/IBM/x"))
	if r.To != MsgAddCx || r.Type() != MsgAddCx.ReplyTo() || r.Errno != spmierr.SiDuplicate || r.Errmsg != `context "DDS/IBM/x" exists` {
		t.Fatalf("reply %+v", r)
	}
	if !errors.Is(r.Err(), &spmierr.Error{Code: spmierr.SiDuplicate}) {
		t.Fatalf("Err() = %v", r.Err())
	}
	if r := NewReply(MsgExit, 0, nil); r.Errno != 0 || r.Errmsg != "" || r.Err() != nil {
		t.Fatalf("success reply %+v", r)
	}
	long := NewReply(MsgInit, 0, errors.New(strings.Repeat("é", 600)))
	if long.Errno != spmierr.SiOtherErr || len(long.Errmsg) > MaxErrmsg || !strings.HasSuffix(long.Errmsg, "é") {
		t.Fatalf("long message: code %v, %d bytes", long.Errno, len(long.Errmsg))
	}
	roundTrip(t, long)
}

func TestMsgTypeNames(t *testing.T) {
	for typ, want := range map[MsgType]string{
		MsgInit: "Init", MsgAddCx.ReplyTo(): "AddCxReply", MsgExit: "Exit", 0: "MsgType(0x0)", 0x85: "MsgType(0x85)", 0x181: "MsgType(0x181)",
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
			b = le.AppendUint16(b, v)
		case uint32:
			b = le.AppendUint32(b, v)
		case uint64:
			b = le.AppendUint64(b, v)
		case int:
			b = le.AppendUint32(b, uint32(v))
		case string:
			b = le.AppendUint16(b, uint16(len(v)))
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
	lim := Limits{MaxContexts: 2, MaxTemplates: 1, MaxStats: 2, MaxStatsTotal: 3}
	good := append(initBody(1, cx("DDS/a", 1, stat("s"))), body(0)...)
	if _, err := Decode(MsgInit, good, lim); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		typ  MsgType
		body []byte
		code spmierr.Code
		subs []string
	}{
		{"empty Init", MsgInit, nil, spmierr.SiBadArgument, []string{"Init: version", "truncated"}},
		{"version", MsgInit, body(uint16(2), "anything at all"), spmierr.SiInitFailed, []string{"protocol version 2"}},
		{"flags", MsgInit, body(uint16(1), uint16(4)), spmierr.SiBadArgument, []string{"flags", "reserved"}},
		{"file too long", MsgInit, body(uint16(1), uint16(0), uint32(8), uint32(0), uint64(1), strings.Repeat("f", 4096)), spmierr.SiBadArgument, []string{"file: 4096 bytes, at most 4095"}},
		{"file truncated", MsgInit, body(uint16(1), uint16(0), uint32(8), uint32(0), uint64(1), uint16(10), []byte("abc")), spmierr.SiBadArgument, []string{"file: truncated: 10 bytes needed, 3 left"}},
		{"too many contexts", MsgInit, initBody(3), spmierr.SiBadArgument, []string{"contexts: 3 entries, at most 2"}},
		{"lying context count", MsgInit, initBody(2, cx("DDS/a", 0)), spmierr.SiBadArgument, []string{"2 entries cannot fit"}},
		{"huge context count", MsgInit, initBody(-1), spmierr.SiBadArgument, []string{"4294967295 entries"}},
		{"path too long", MsgInit, initBody(1, cx(strings.Repeat("p", 64), 0)), spmierr.SiBadArgument, []string{"context 0: path: 64 bytes, at most 63"}},
		{"too many stats", MsgInit, initBody(1, cx("DDS/a", 3)), spmierr.SiBadArgument, []string{"statistics: 3 entries, at most 2"}},
		{"lying stat count", MsgInit, initBody(1, cx("DDS/a", 2, stat("s"))), spmierr.SiBadArgument, []string{"2 entries cannot fit"}},
		{"stats in all", MsgInit, initBody(2, cx("DDS/a", 2, stat("s"), stat("t")), cx("DDS/a/b", 2, stat("s"), stat("t"))), spmierr.SiBadArgument, []string{"4 in all", "at most 3"}},
		{"stat name too long", MsgInit, initBody(1, cx("DDS/a", 1, stat(strings.Repeat("n", 32)))), spmierr.SiBadArgument, []string{"context 0: statistic 0: name: 32 bytes, at most 31"}},
		{"stat descr too long", MsgInit, initBody(1, cx("DDS/a", 1, body("n", strings.Repeat("d", 64)))), spmierr.SiBadArgument, []string{"statistic 0: description: 64 bytes, at most 63"}},
		{"stat truncated", MsgInit, initBody(1, cx("DDS/a", 1, stat("s")[:30])), spmierr.SiBadArgument, []string{"statistic", "cannot fit"}},
		{"templates missing", MsgInit, initBody(1, cx("DDS/a", 0)), spmierr.SiBadArgument, []string{"templates count: truncated"}},
		{"too many templates", MsgInit, append(initBody(1, cx("DDS/a", 0)), body(2)...), spmierr.SiBadArgument, []string{"templates: 2 entries, at most 1"}},
		{"template stat", MsgInit, append(initBody(1, cx("DDS/a", 0)), append(body(1), cx("T", 1, stat(strings.Repeat("x", 40)))...)...), spmierr.SiBadArgument, []string{"template 0: statistic 0: name: 40 bytes"}},
		{"trailing bytes", MsgInit, append(good, 0), spmierr.SiBadArgument, []string{"1 bytes after the end"}},
		{"AddCx truncated", MsgAddCx, body(uint16(0), "DDS/a/b"), spmierr.SiBadArgument, []string{"AddCx: description length: truncated"}},
		{"AddCx path", MsgAddCx, body(uint16(0), strings.Repeat("p", 64)), spmierr.SiBadArgument, []string{"AddCx: path: 64 bytes"}},
		{"AddCx offset short", MsgAddCx, body(uint16(0), "p", "d", uint32(1), uint16(32)), spmierr.SiBadArgument, []string{"AddCx: offset: truncated: 4 bytes needed, 2 left"}},
		{"AddCx flags unknown", MsgAddCx, body(uint16(0), "p", "d", uint32(1), uint32(32), uint32(0x21)), spmierr.SiBadArgument, []string{"AddCx: flags", "unknown flags 0x20"}},
		{"AddCx flags short", MsgAddCx, body(uint16(0), "p", "d", uint32(1), uint32(32), uint16(1)), spmierr.SiBadArgument, []string{"AddCx: flags: truncated"}},
		{"AddCx long", MsgAddCx, body(uint16(0), "p", "d", uint32(1), uint32(0), uint32(1), uint32(0)), spmierr.SiBadArgument, []string{"AddCx: 4 bytes after the end"}},
		{"AddCx descr", MsgAddCx, body(uint16(0), "p", strings.Repeat("d", 64)), spmierr.SiBadArgument, []string{"AddCx: description: 64 bytes"}},
		{"DelCx short", MsgDelCx, body(uint16(0)), spmierr.SiBadArgument, []string{"DelCx: offset: truncated"}},
		{"DelCx long", MsgDelCx, body(uint64(0)), spmierr.SiBadArgument, []string{"4 bytes after the end"}},
		{"Exit with body", MsgExit, []byte{0}, spmierr.SiBadArgument, []string{"Exit: 1 bytes after"}},
		{"reply reserved", MsgInit.ReplyTo(), body(uint32(0), uint32(1), uint64(0), ""), spmierr.SiBadArgument, []string{"reserved"}},
		{"reply message", MsgInit.ReplyTo(), body(uint32(0), uint32(0), uint64(0), strings.Repeat("m", 1024)), spmierr.SiBadArgument, []string{"error message: 1024 bytes"}},
		{"reply short", MsgExit.ReplyTo(), body(uint32(0)), spmierr.SiBadArgument, []string{"ExitReply: reserved: truncated"}},
		{"unknown type", 9, nil, spmierr.SiBadArgument, []string{"unknown message type 0x9"}},
		{"unknown reply", 0x89, nil, spmierr.SiBadArgument, []string{"unknown message type 0x89"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Decode(tc.typ, tc.body, lim)
			if m != nil {
				t.Fatalf("decoded %+v", m)
			}
			wantErr(t, err, tc.code, tc.subs...)
		})
	}
}

func TestMarshalRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    Message
		lim  Limits
		sub  string
	}{
		{"stat name", &Init{Contexts: []Cx{{Path: "DDS/a", Stats: []Stat{{Name: strings.Repeat("n", 32)}}}}}, Limits{}, "Init: context 0: statistic 0: name: 32 bytes"},
		{"path", &AddCx{Path: strings.Repeat("p", 64)}, Limits{}, "AddCx: path: 64 bytes"},
		{"contexts", &Init{Contexts: make([]Cx, 3)}, Limits{MaxContexts: 2}, "Init: context: 3 entries, at most 2"},
		{"templates", &Init{Templates: make([]Cx, 3)}, Limits{MaxTemplates: 2}, "Init: template: 3 entries"},
		{"stats", &Init{Contexts: []Cx{{Stats: make([]Stat, 3)}}}, Limits{MaxStats: 2}, "Init: context 0: statistics: 3 entries"},
		{"stats in all", &Init{Contexts: []Cx{{Stats: make([]Stat, 2)}}, Templates: []Cx{{Stats: make([]Stat, 2)}}}, Limits{MaxStatsTotal: 3}, "4 statistics in all"},
		{"frame", &Init{File: "/" + strings.Repeat("f", 4000)}, Limits{MaxFrame: 1024}, "Init is 4031 bytes, at most 1024"},
		{"reply to nothing", &Reply{}, Limits{}, "type MsgType(0x80)"},
		{"errmsg", &Reply{To: MsgInit, Errmsg: strings.Repeat("m", 1024)}, Limits{}, "error message: 1024 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Marshal(tc.m, tc.lim)
			wantErr(t, err, spmierr.SiBadArgument, tc.sub)
		})
	}
}

func TestReadFrame(t *testing.T) {
	frame := func(n uint32, typ, res uint16, rest ...byte) []byte {
		b := le.AppendUint32(nil, n)
		b = le.AppendUint16(b, typ)
		b = le.AppendUint16(b, res)
		return append(b, rest...)
	}
	if _, _, err := ReadFrame(bytes.NewReader(nil), Limits{}); err != io.EOF {
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
			_, _, err := ReadFrame(bytes.NewReader(tc.in), Limits{MaxFrame: 1024})
			if tc.want != nil {
				if err != tc.want {
					t.Fatalf("got %v, want %v", err, tc.want)
				}
				return
			}
			wantErr(t, err, spmierr.SiBadArgument, tc.sub)
		})
	}
	// Two messages back to back on one stream, read one at a time.
	var buf bytes.Buffer
	for _, m := range []Message{&DelCx{Offset: 8}, &Exit{}} {
		if err := WriteMessage(&buf, m, Limits{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []MsgType{MsgDelCx, MsgExit} {
		m, err := ReadMessage(&buf, Limits{})
		if err != nil || m.Type() != want {
			t.Fatalf("got %v, %v; want %s", m, err, want)
		}
	}
	if _, err := ReadMessage(&buf, Limits{}); err != io.EOF {
		t.Fatalf("after the last frame: %v", err)
	}
}

func TestLimitsNorm(t *testing.T) {
	l, err := Limits{}.Norm()
	if err != nil || l != DefaultLimits {
		t.Fatalf("zero limits: %+v, %v", l, err)
	}
	if _, err := (Limits{MaxTemplates: 70000}).Norm(); err == nil || !strings.Contains(err.Error(), "MaxTemplates = 70000") {
		t.Fatalf("MaxTemplates: %v", err)
	}
	if _, err := (Limits{MaxArea: 12}).Norm(); err == nil || !strings.Contains(err.Error(), "MaxArea = 12") {
		t.Fatalf("MaxArea: %v", err)
	}
	if _, err := (Limits{MaxStats: -1}).Norm(); err == nil {
		t.Fatal("negative MaxStats accepted")
	}
	// The codecs clamp instead of failing.
	if n := (Limits{MaxTemplates: 70000, MaxArea: 12, MaxStats: -1}).norm(); n.MaxTemplates != 65536 || n.MaxArea != 8 || n.MaxStats != 1 {
		t.Fatalf("clamped %+v", n)
	}
	if got := (Limits{MaxArea: 1 << 20}).MaxFileLen(); got != MaxHeader+1<<20 {
		t.Fatalf("MaxFileLen %d", got)
	}
}
