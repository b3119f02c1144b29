package dds

import (
	"sort"

	"github.com/perfagent/subagent/client/spmierr"
)

// Slots allocates volatile context slots in the data area after the
// permanent part: first fit, 8-aligned, freed slots merged with their free
// neighbours. The daemon keeps one per supplier; the file holds no
// allocation state, so a supplier cannot corrupt it.
type Slots struct {
	lo, hi uint32            // the volatile part
	free   []span            // sorted by offset, never adjacent
	used   map[uint32]uint32 // offset -> size
}

type span struct{ off, size uint32 }

// NewSlots manages [permLen, areaLen) of a data area (both multiples of 8).
func NewSlots(permLen, areaLen uint32) *Slots {
	s := &Slots{lo: permLen, hi: areaLen, used: map[uint32]uint32{}}
	if areaLen > permLen {
		s.free = []span{{permLen, areaLen - permLen}}
	}
	return s
}

func slotBytes(size uint32) uint64 { return (uint64(max(size, 8)) + 7) &^ 7 }

// Alloc returns the offset of a free slot of size bytes (rounded up to a
// multiple of 8, at least 8), or SiCallocFailed when none is large enough.
func (s *Slots) Alloc(size uint32) (uint32, error) {
	n := slotBytes(size)
	for i, f := range s.free {
		if uint64(f.size) < n {
			continue
		}
		off := f.off
		if uint64(f.size) == n {
			s.free = append(s.free[:i], s.free[i+1:]...)
		} else {
			s.free[i] = span{f.off + uint32(n), f.size - uint32(n)}
		}
		s.used[off] = uint32(n)
		return off, nil
	}
	return 0, spmierr.Errorf(spmierr.SiCallocFailed, "no free %d-byte slot in the data area (%d bytes free in %d pieces)", n, s.Free(), len(s.free))
}

// AllocAt allocates the slot of size bytes (rounded as by Alloc) at off,
// which a library asks for when it replays a context after a daemon
// restart. A misaligned offset or a slot outside the volatile part is
// SiBadArgument; one that overlaps an allocated slot is SiCallocFailed.
func (s *Slots) AllocAt(off, size uint32) error {
	n := slotBytes(size)
	end := uint64(off) + n
	switch {
	case off%8 != 0:
		return spmierr.Errorf(spmierr.SiBadArgument, "requested slot offset %d is not a multiple of 8", off)
	case off < s.lo || end > uint64(s.hi):
		return spmierr.Errorf(spmierr.SiBadArgument, "requested slot offset %d (%d bytes) is outside the volatile part [%d, %d) of the data area", off, n, s.lo, s.hi)
	}
	// The free span that starts at or before off must hold the whole slot.
	i := sort.Search(len(s.free), func(i int) bool { return s.free[i].off > off }) - 1
	if i < 0 || end > uint64(s.free[i].off)+uint64(s.free[i].size) {
		return spmierr.Errorf(spmierr.SiCallocFailed, "requested slot offset %d (%d bytes) overlaps a slot in use", off, n)
	}
	f := s.free[i]
	var keep []span // what remains of f: before and after the slot
	if off > f.off {
		keep = append(keep, span{f.off, off - f.off})
	}
	if fend := f.off + f.size; uint64(fend) > end {
		keep = append(keep, span{uint32(end), fend - uint32(end)})
	}
	s.free = append(s.free[:i], append(keep, s.free[i+1:]...)...)
	s.used[off] = uint32(n)
	return nil
}

// Release returns the slot at off to the free list and its size, or
// SiNotFound if off is not the start of an allocated slot.
func (s *Slots) Release(off uint32) (uint32, error) {
	n, ok := s.used[off]
	if !ok {
		return 0, spmierr.Errorf(spmierr.SiNotFound, "no volatile context has its data area at offset %d", off)
	}
	delete(s.used, off)
	i := sort.Search(len(s.free), func(i int) bool { return s.free[i].off > off })
	f := span{off, n}
	if i > 0 && s.free[i-1].off+s.free[i-1].size == off {
		i--
		f = span{s.free[i].off, s.free[i].size + n}
		s.free = append(s.free[:i], s.free[i+1:]...)
	}
	if i < len(s.free) && f.off+f.size == s.free[i].off {
		f.size += s.free[i].size
		s.free[i] = f
	} else {
		s.free = append(s.free, span{})
		copy(s.free[i+1:], s.free[i:])
		s.free[i] = f
	}
	return n, nil
}

// Size is the size of the slot at off, if one is allocated there.
func (s *Slots) Size(off uint32) (uint32, bool) {
	n, ok := s.used[off]
	return n, ok
}

// InUse is the number of allocated slots.
func (s *Slots) InUse() int { return len(s.used) }

// Free is the number of free bytes.
func (s *Slots) Free() uint32 {
	var t uint32
	for _, f := range s.free {
		t += f.size
	}
	return t
}
