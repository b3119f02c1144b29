package slo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/perfagent/subagent/client/trustdir"
)

// StateFile is the counts' file in the state directory.
const StateFile = "slo-state.bin"

// MaxObjectives bounds the objectives (config/ refuses more), and so the
// state file.
const MaxObjectives = 1024

// The state file: stateMagic, the number of objectives, then per
// objective its name, its history (what the counts mean), unclassified,
// and the non-zero fine then coarse buckets with their heads; a CRC-32 of
// everything before it ends the file. Little-endian.
const stateMagic = "SUBAGENT-SLO\x00\x00\x00\x01"

const (
	maxName    = 255
	maxHistory = 1024
	perObjMax  = 2 + maxName + 2 + maxHistory + 8 + 8 + 4 + FineN*10 + 8 + 4 + int(MaxSpan/Coarse)*18
	maxState   = len(stateMagic) + 4 + MaxObjectives*perObjMax + 4
)

// Marshal encodes the counts of every objective.
func (s *Set) Marshal() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := []byte(stateMagic)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s.objs)))
	for _, x := range s.objs {
		b = appendStr(b, x.Name)
		b = appendStr(b, x.history())
		b = binary.LittleEndian.AppendUint64(b, x.unclassified)
		b = binary.LittleEndian.AppendUint64(b, uint64(x.f.head))
		n := 0
		for _, v := range x.f.b {
			if v != [2]uint32{} {
				n++
			}
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(n))
		for i, v := range x.f.b {
			if v != [2]uint32{} {
				b = binary.LittleEndian.AppendUint16(b, uint16(i))
				b = binary.LittleEndian.AppendUint32(b, v[0])
				b = binary.LittleEndian.AppendUint32(b, v[1])
			}
		}
		var c coarse
		if x.c != nil {
			c = *x.c
		}
		b = binary.LittleEndian.AppendUint64(b, uint64(c.head))
		n = 0
		for _, v := range c.b {
			if v != [2]uint64{} {
				n++
			}
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(n))
		for i, v := range c.b {
			if v != [2]uint64{} {
				b = binary.LittleEndian.AppendUint16(b, uint16(i))
				b = binary.LittleEndian.AppendUint64(b, v[0])
				b = binary.LittleEndian.AppendUint64(b, v[1])
			}
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

func appendStr(b []byte, s string) []byte {
	return append(binary.LittleEndian.AppendUint16(b, uint16(len(s))), s...)
}

// Save writes the counts to path atomically (trustdir.WriteFile).
func (s *Set) Save(path string) error { return trustdir.WriteFile(path, s.Marshal(), 0o600) }

// Load restores the counts saved at path into the objectives of the same
// name and history, and returns how many it restored. A file that does
// not decode is refused whole, naming what is wrong; nothing changes then.
func (s *Set) Load(path string) (int, error) {
	b, err := trustdir.ReadFileMax(path, int64(maxState))
	if err != nil {
		return 0, err
	}
	n, err := s.Unmarshal(b)
	if err != nil {
		return 0, fmt.Errorf("%s: %w (it is not used; the objectives start afresh)", path, err)
	}
	return n, nil
}

// saved is one objective's counts as decoded.
type saved struct {
	name, history string
	unclassified  uint64
	f             fine
	cHead         int64
	c             map[int][2]uint64
}

// Unmarshal restores what Marshal encoded (see Load).
func (s *Set) Unmarshal(b []byte) (int, error) {
	if len(b) < len(stateMagic)+8 || string(b[:len(stateMagic)]) != stateMagic {
		return 0, errors.New("not an objectives state file (magic)")
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return 0, errors.New("checksum mismatch: the file is damaged")
	}
	d := dec{b: body[len(stateMagic):]}
	count := d.u32()
	if count > MaxObjectives {
		return 0, fmt.Errorf("%d objectives, more than %d", count, MaxObjectives)
	}
	var all []*saved
	for range count {
		x := &saved{name: d.str(maxName), history: d.str(maxHistory), unclassified: d.u64()}
		x.f.head = int64(d.u64())
		n := d.u32()
		if n > FineN {
			d.fail("%s: %d minute buckets, more than %d", x.name, n, FineN)
		}
		for range n {
			i := int(d.u16())
			if i >= FineN {
				d.fail("%s: minute bucket %d beyond %d", x.name, i, FineN)
				break
			}
			x.f.b[i] = [2]uint32{d.u32(), d.u32()}
		}
		x.cHead = int64(d.u64())
		n = d.u32()
		if n > uint32(MaxSpan/Coarse) {
			d.fail("%s: %d hour buckets, more than %d", x.name, n, MaxSpan/Coarse)
		}
		x.c = map[int][2]uint64{}
		for range n {
			x.c[int(d.u16())] = [2]uint64{d.u64(), d.u64()}
		}
		if d.err != nil {
			return 0, d.err
		}
		all = append(all, x)
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d bytes after the last objective", len(d.b))
	}
	if d.err != nil {
		return 0, d.err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	restored := 0
	for _, x := range all {
		for _, o := range s.objs {
			if o.Name != x.name || o.history() != x.history {
				continue
			}
			o.unclassified, o.f = x.unclassified, x.f
			if o.c != nil {
				o.c.head = x.cHead
				clear(o.c.b)
				for i, v := range x.c {
					if i < len(o.c.b) {
						o.c.b[i] = v
					}
				}
			}
			o.resum()
			restored++
		}
	}
	return restored, nil
}

// dec reads the state file, remembering the first error.
type dec struct {
	b   []byte
	err error
}

func (d *dec) fail(f string, a ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(f, a...)
	}
}

func (d *dec) take(n int) []byte {
	if d.err != nil || len(d.b) < n {
		d.fail("truncated")
		return make([]byte, n)
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *dec) u16() uint16 { return binary.LittleEndian.Uint16(d.take(2)) }
func (d *dec) u32() uint32 { return binary.LittleEndian.Uint32(d.take(4)) }
func (d *dec) u64() uint64 { return binary.LittleEndian.Uint64(d.take(8)) }

func (d *dec) str(limit int) string {
	n := int(d.u16())
	if n > limit {
		d.fail("a name of %d bytes, more than %d", n, limit)
		return ""
	}
	return string(d.take(n))
}
