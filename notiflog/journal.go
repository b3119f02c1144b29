package notiflog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

// The journal file: the magic line, then records, each framed as its
// payload's length and CRC-32C (little-endian uint32s) and the payload,
// whose first byte says what it records. Appending a notification costs
// its own record; a compaction rewrites the file with a state record and
// one add record per live entry (its outcomes included).
const magic = "subagent notification journal 1\n"

const (
	recState   = 'S' // the next index
	recAdd     = 'A' // an entry
	recOutcome = 'O' // a delivery path's outcome of an entry
	recKeep    = 'K' // entries before this index are gone (limits)
	recReserve = 'R' // indexes before this one may have been handed out

	frameHeader = 8
	maxRecord   = 1 << 20 // an entry is at most about 40 kB; more is damage
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// record is one change of the log, as the writer encodes it.
type record struct {
	kind byte
	idx  uint32  // recState: next; recOutcome: entry; recKeep: first kept; recReserve: reserved up to
	e    Entry   // recAdd
	o    Outcome // recOutcome
}

// appendFrame appends r framed to b.
func appendFrame(b []byte, r *record) []byte {
	start := len(b)
	b = append(b, make([]byte, frameHeader)...)
	b = append(b, r.kind)
	switch r.kind {
	case recState, recKeep, recReserve:
		b = binary.AppendUvarint(b, uint64(r.idx))
	case recOutcome:
		b = binary.AppendUvarint(b, uint64(r.idx))
		b = appendOutcome(b, &r.o)
	case recAdd:
		b = appendEntry(b, &r.e)
	}
	p := b[start+frameHeader:]
	binary.LittleEndian.PutUint32(b[start:], uint32(len(p)))
	binary.LittleEndian.PutUint32(b[start+4:], crc32.Checksum(p, castagnoli))
	return b
}

func appendBytes(b, s []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendOID(b []byte, o asn1tree.OID) []byte {
	b = binary.AppendUvarint(b, uint64(len(o)))
	for _, s := range o {
		b = binary.AppendUvarint(b, uint64(s))
	}
	return b
}

func appendOutcome(b []byte, o *Outcome) []byte {
	b = appendBytes(b, []byte(o.Path))
	b = appendBytes(b, []byte(o.Result))
	if o.OK {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendEntry(b []byte, e *Entry) []byte {
	b = binary.AppendUvarint(b, uint64(e.Index))
	b = binary.AppendVarint(b, int64(e.Uptime))
	b = binary.AppendVarint(b, e.Time.UnixNano())
	b = appendOID(b, e.OID)
	b = binary.AppendUvarint(b, uint64(len(e.Vars)))
	for i := range e.Vars {
		v := &e.Vars[i]
		b = appendOID(b, v.OID)
		b = append(b, byte(v.Kind))
		b = binary.AppendUvarint(b, v.Num)
		b = appendBytes(b, v.Bytes)
		b = appendOID(b, v.Obj)
	}
	b = binary.AppendUvarint(b, uint64(e.Omitted))
	b = binary.AppendUvarint(b, uint64(len(e.Outcomes)))
	for i := range e.Outcomes {
		b = appendOutcome(b, &e.Outcomes[i])
	}
	return b
}

// dec reads a payload; the first error sticks.
type dec struct {
	b   []byte
	err error
}

var errShort = errors.New("record ends early")

func (d *dec) uvarint(max uint64, what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	switch {
	case n <= 0:
		d.err = errShort
		return 0
	case v > max:
		d.err = fmt.Errorf("%s %d is more than %d", what, v, max)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) byte() byte {
	if d.err == nil && len(d.b) == 0 {
		d.err = errShort
	}
	if d.err != nil {
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

// count reads a count of things of a byte or more each.
func (d *dec) count(what string) uint64 {
	n := d.uvarint(1<<32, what)
	if d.err == nil && n > uint64(len(d.b)) {
		d.err = errShort
		return 0
	}
	return n
}

func (d *dec) bytes() []byte {
	n := d.count("length")
	if d.err != nil || n == 0 {
		return nil
	}
	s := bytes.Clone(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *dec) oid() asn1tree.OID {
	n := d.count("OID length")
	if n == 0 {
		return nil
	}
	o := make(asn1tree.OID, 0, n)
	for range n {
		o = append(o, uint32(d.uvarint(1<<32-1, "sub-identifier")))
	}
	return o
}

func (d *dec) outcome() Outcome {
	return Outcome{Path: string(d.bytes()), Result: string(d.bytes()), OK: d.byte() == 1}
}

func (d *dec) entry() Entry {
	e := Entry{Index: uint32(d.uvarint(1<<32-1, "index"))}
	e.Uptime = time.Duration(d.varint())
	e.Time = time.Unix(0, d.varint())
	e.OID = d.oid()
	nv := d.uvarint(MaxVars, "VarBinds")
	for range nv {
		e.Vars = append(e.Vars, Var{OID: d.oid(), Kind: asn1tree.Kind(d.byte()), Num: d.uvarint(1<<64-1, "value"), Bytes: d.bytes(), Obj: d.oid()})
	}
	e.Omitted = int(d.uvarint(1<<31, "omitted VarBinds"))
	no := d.uvarint(MaxOutcomes, "outcomes")
	for range no {
		e.Outcomes = append(e.Outcomes, d.outcome())
	}
	return e
}

// decode reads one payload.
func decode(p []byte) (record, error) {
	d := &dec{b: p}
	r := record{kind: d.byte()}
	switch r.kind {
	case recState, recKeep, recReserve:
		r.idx = uint32(d.uvarint(1<<32-1, "index"))
	case recOutcome:
		r.idx = uint32(d.uvarint(1<<32-1, "index"))
		r.o = d.outcome()
	case recAdd:
		r.e = d.entry()
	default:
		return r, fmt.Errorf("unknown record type %q", r.kind)
	}
	if d.err == nil && len(d.b) > 0 {
		d.err = fmt.Errorf("%d bytes after the record", len(d.b))
	}
	return r, d.err
}

// frames calls f with each complete, intact frame of b after the magic
// line (its payload and frame length) and returns the length of b they
// take: what follows is a torn or corrupt tail.
func frames(b []byte, f func(p []byte, n int) error) (int, error) {
	off := len(magic)
	for len(b)-off >= frameHeader {
		n := int(binary.LittleEndian.Uint32(b[off:]))
		if n == 0 || n > maxRecord || n > len(b)-off-frameHeader {
			break
		}
		p := b[off+frameHeader : off+frameHeader+n]
		if crc32.Checksum(p, castagnoli) != binary.LittleEndian.Uint32(b[off+4:]) {
			break
		}
		if err := f(p, frameHeader+n); err != nil {
			return off, fmt.Errorf("record at byte %d: %w", off, err)
		}
		off += frameHeader + n
	}
	return off, nil
}

// liveSizes tracks the bytes each kept entry takes in the journal (its
// add and outcome records), so that the writer knows when the journal is
// much bigger than a compaction would make it.
type liveSizes struct {
	s     []sized // by index, oldest first
	total int64
}

type sized struct {
	idx uint32
	n   int64
}

func (ls *liveSizes) add(idx uint32, n int) {
	ls.s = append(ls.s, sized{idx, int64(n)})
	ls.total += int64(n)
}

// addTo counts n more bytes for entry idx, if it is kept.
func (ls *liveSizes) addTo(idx uint32, n int) {
	for i := len(ls.s) - 1; i >= 0; i-- { // outcomes are of recent entries
		if c := cmpIndex(ls.s[i].idx, idx); c <= 0 {
			if c == 0 {
				ls.s[i].n += int64(n)
				ls.total += int64(n)
			}
			return
		}
	}
}

// keep forgets the entries before idx.
func (ls *liveSizes) keep(idx uint32) {
	i := 0
	for i < len(ls.s) && cmpIndex(ls.s[i].idx, idx) < 0 {
		ls.total -= ls.s[i].n
		i++
	}
	ls.s = ls.s[i:]
}

// apply counts a record of n bytes.
func (ls *liveSizes) apply(r *record, n int) {
	switch r.kind {
	case recAdd:
		ls.add(r.e.Index, n)
	case recOutcome:
		ls.addTo(r.idx, n)
	case recKeep:
		ls.keep(r.idx)
	}
}
