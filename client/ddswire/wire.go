package ddswire

import (
	"fmt"
	"strings"

	"github.com/perfagent/subagent/client/spmierr"
)

// Wire primitives: little-endian fixed-width integers and strings as a
// 16-bit length then the bytes (no NUL). The decoder stops at the first
// problem and names the field; nothing is allocated from a length or count
// before it is checked against the limit and against the bytes left.

type dec struct {
	b   []byte
	off int
	at  where // where in the message, for errors
	err error
}

// where is a position in a message, formatted only when an error names it
// (a message of a million statistics is not worth a Sprintf each).
type where []loc

type loc struct {
	what string
	i    int // -1: what alone (the message's type)
}

func (w where) String() string {
	var b strings.Builder
	for _, l := range w {
		if l.i < 0 {
			fmt.Fprintf(&b, "%s: ", l.what)
		} else {
			fmt.Fprintf(&b, "%s %d: ", l.what, l.i)
		}
	}
	return b.String()
}

func (d *dec) fail(field, format string, args ...any) {
	if d.err == nil {
		d.err = spmierr.Errorf(spmierr.SiBadArgument, "%s%s: %s", d.at, field, fmt.Sprintf(format, args...))
	}
}

func (d *dec) take(n int, field string) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.b)-d.off {
		d.fail(field, "truncated: %d bytes needed, %d left", n, len(d.b)-d.off)
		return nil
	}
	p := d.b[d.off : d.off+n]
	d.off += n
	return p
}

func (d *dec) u8(field string) uint8 {
	if p := d.take(1, field); p != nil {
		return p[0]
	}
	return 0
}

func (d *dec) u16(field string) uint16 {
	if p := d.take(2, field); p != nil {
		return le.Uint16(p)
	}
	return 0
}

func (d *dec) u32(field string) uint32 {
	if p := d.take(4, field); p != nil {
		return le.Uint32(p)
	}
	return 0
}

func (d *dec) u64(field string) uint64 {
	if p := d.take(8, field); p != nil {
		return le.Uint64(p)
	}
	return 0
}

// zero reads a reserved field, which must be 0 so a later version can give
// it a meaning that old peers notice.
func (d *dec) zero16(field string) {
	if v := d.u16(field); v != 0 {
		d.fail(field, "reserved, must be 0, is %d", v)
	}
}

func (d *dec) str(field string, max int) string {
	n := int(d.u16(field + " length"))
	if d.err == nil && n > max {
		d.fail(field, "%d bytes, at most %d allowed", n, max)
		return ""
	}
	return string(d.take(n, field))
}

// count reads a 32-bit element count, each element at least minSize bytes.
func (d *dec) count(field string, limit, minSize int) int {
	n := d.u32(field + " count")
	switch {
	case d.err != nil:
		return 0
	case uint64(n) > uint64(limit):
		d.fail(field, "%d entries, at most %d allowed", n, limit)
		return 0
	case uint64(n)*uint64(minSize) > uint64(len(d.b)-d.off):
		d.fail(field, "%d entries cannot fit in the %d bytes left", n, len(d.b)-d.off)
		return 0
	}
	return int(n)
}

func (d *dec) end() {
	if d.err == nil && d.off != len(d.b) {
		d.err = spmierr.Errorf(spmierr.SiBadArgument, "%s%d bytes after the end of the message", d.at, len(d.b)-d.off)
	}
}

type enc struct {
	b   []byte
	at  where
	err error
}

func (e *enc) u8(v uint8)   { e.b = append(e.b, v) }
func (e *enc) u16(v uint16) { e.b = le.AppendUint16(e.b, v) }
func (e *enc) u32(v uint32) { e.b = le.AppendUint32(e.b, v) }
func (e *enc) u64(v uint64) { e.b = le.AppendUint64(e.b, v) }

func (e *enc) str(field, s string, max int) {
	if len(s) > max && e.err == nil {
		e.err = spmierr.Errorf(spmierr.SiBadArgument, "%s%s: %d bytes, at most %d allowed", e.at, field, len(s), max)
	}
	e.u16(uint16(min(len(s), max)))
	e.b = append(e.b, s[:min(len(s), max)]...)
}

func (e *enc) count(field string, n, limit int) {
	if n > limit && e.err == nil {
		e.err = spmierr.Errorf(spmierr.SiBadArgument, "%s%s: %d entries, at most %d allowed", e.at, field, n, limit)
	}
	e.u32(uint32(n))
}
