package armring

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// Messages on arm.sock. A frame is an 8-byte head (body length uint32,
// type uint16, reserved uint16 = 0) and the body; integers are
// little-endian, a string is a uint16 byte count and the bytes.
const (
	MsgHello   = 1    // process -> daemon, first and only request
	MsgWelcome = 0x81 // daemon -> process, with the file's descriptor
	MaxFrame   = 2048
	MaxProg    = 255
	MaxMsg     = 1023
)

// Hello opens a registration.
type Hello struct {
	Version uint16 // Version
	PID     int32  // the sender's PID (checked against SO_PEERCRED)
	Prog    string // program name, informational
}

// Welcome answers a Hello. Status 0 comes with the file's descriptor and
// its geometry; otherwise Msg says why and the daemon closes.
type Welcome struct {
	Status int32
	Gen    uint64
	Geometry
	Msg string
}

// Marshal encodes h as a frame.
func (h *Hello) Marshal() []byte {
	b := frame(MsgHello)
	b = binary.LittleEndian.AppendUint16(b, h.Version)
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(h.PID))
	b = appendStr(b, Descr(h.Prog, MaxProg))
	return seal(b)
}

// Marshal encodes w as a frame.
func (w *Welcome) Marshal() []byte {
	le := binary.LittleEndian
	b := frame(MsgWelcome)
	b = le.AppendUint32(b, uint32(w.Status))
	b = le.AppendUint32(b, 0)
	b = le.AppendUint64(b, w.Gen)
	b = le.AppendUint64(b, w.FileLen())
	b = le.AppendUint32(b, w.Slots)
	b = le.AppendUint32(b, w.Apps)
	b = le.AppendUint32(b, w.Trans)
	b = le.AppendUint32(b, 0)
	b = appendStr(b, Descr(w.Msg, MaxMsg))
	return seal(b)
}

func frame(t uint16) []byte {
	b := make([]byte, 8, 64)
	binary.LittleEndian.PutUint16(b[4:], t)
	return b
}

func seal(b []byte) []byte {
	binary.LittleEndian.PutUint32(b, uint32(len(b)-8))
	return b
}

func appendStr(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// ReadFrame reads one frame: its type and body.
func ReadFrame(r io.Reader) (uint16, []byte, error) {
	var h [8]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	le := binary.LittleEndian
	n, t := le.Uint32(h[:]), le.Uint16(h[4:])
	if le.Uint16(h[6:]) != 0 {
		return 0, nil, fmt.Errorf("frame: reserved field %d, want 0", le.Uint16(h[6:]))
	}
	if n > MaxFrame {
		return 0, nil, fmt.Errorf("frame: body of %d bytes, at most %d", n, MaxFrame)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return 0, nil, fmt.Errorf("frame: body: %w", err)
	}
	return t, b, nil
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.b) < n {
		r.err = fmt.Errorf("%s: %d bytes left, want %d", what, len(r.b), n)
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *reader) u16(what string) uint16 {
	if p := r.take(2, what); p != nil {
		return binary.LittleEndian.Uint16(p)
	}
	return 0
}

func (r *reader) u32(what string) uint32 {
	if p := r.take(4, what); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

func (r *reader) u64(what string) uint64 {
	if p := r.take(8, what); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

func (r *reader) str(what string, max int) string {
	n := int(r.u16(what + " length"))
	if r.err == nil && n > max {
		r.err = fmt.Errorf("%s: %d bytes, at most %d", what, n, max)
	}
	s := string(r.take(n, what))
	if r.err == nil && !utf8.ValidString(s) {
		r.err = fmt.Errorf("%s: not valid UTF-8", what)
	}
	return s
}

func (r *reader) end(what string) error {
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%s: %d bytes after the last field", what, len(r.b))
	}
	return r.err
}

// DecodeHello decodes a Hello body.
func DecodeHello(body []byte) (Hello, error) {
	r := &reader{b: body}
	var h Hello
	h.Version = r.u16("Hello: version")
	if r.err == nil && h.Version != Version {
		return h, fmt.Errorf("Hello: version %d, this daemon speaks %d", h.Version, Version)
	}
	if f := r.u16("Hello: flags"); r.err == nil && f != 0 {
		return h, fmt.Errorf("Hello: flags %#x, want 0", f)
	}
	h.PID = int32(r.u32("Hello: pid"))
	h.Prog = r.str("Hello: program", MaxProg)
	if err := r.end("Hello"); err != nil {
		return h, err
	}
	return h, checkText("Hello: program", h.Prog, MaxProg)
}

// DecodeWelcome decodes a Welcome body and checks its geometry.
func DecodeWelcome(body []byte) (Welcome, error) {
	r := &reader{b: body}
	var w Welcome
	w.Status = int32(r.u32("Welcome: status"))
	r.u32("Welcome: reserved")
	w.Gen = r.u64("Welcome: generation")
	flen := r.u64("Welcome: file length")
	w.Slots, w.Apps, w.Trans = r.u32("Welcome: slots"), r.u32("Welcome: apps"), r.u32("Welcome: trans")
	r.u32("Welcome: reserved")
	w.Msg = r.str("Welcome: message", MaxMsg)
	if err := r.end("Welcome"); err != nil {
		return w, err
	}
	if w.Status != 0 {
		return w, nil
	}
	if err := w.Check(); err != nil {
		return w, fmt.Errorf("Welcome: %w", err)
	}
	if flen != w.FileLen() {
		return w, fmt.Errorf("Welcome: file length %d, geometry needs %d", flen, w.FileLen())
	}
	if w.Gen == 0 {
		return w, errors.New("Welcome: generation 0")
	}
	return w, nil
}
