package dds

import (
	"sort"

	"github.com/perfagent/subagent/spmi"
)

// Slots allocates volatile context slots in the data area after the
// permanent part: first fit, 8-aligned, freed slots merged with their free
// neighbours. The daemon keeps one per supplier; the file holds no
// allocation state, so a supplier cannot corrupt it.
type Slots struct {
	free []span            // sorted by offset, never adjacent
	used map[uint32]uint32 // offset -> size
}

type span struct{ off, size uint32 }

// NewSlots manages [permLen, areaLen) of a data area (both multiples of 8).
func NewSlots(permLen, areaLen uint32) *Slots {
	s := &Slots{used: map[uint32]uint32{}}
	if areaLen > permLen {
		s.free = []span{{permLen, areaLen - permLen}}
	}
	return s
}

// Alloc returns the offset of a free slot of size bytes (rounded up to a
// multiple of 8, at least 8), or SiCallocFailed when none is large enough.
func (s *Slots) Alloc(size uint32) (uint32, error) {
	n := (uint64(max(size, 8)) + 7) &^ 7
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
	return 0, spmi.Errorf(spmi.SiCallocFailed, "no free %d-byte slot in the data area (%d bytes free in %d pieces)", n, s.Free(), len(s.free))
}

// Release returns the slot at off to the free list and its size, or
// SiNotFound if off is not the start of an allocated slot.
func (s *Slots) Release(off uint32) (uint32, error) {
	n, ok := s.used[off]
	if !ok {
		return 0, spmi.Errorf(spmi.SiNotFound, "no volatile context has its data area at offset %d", off)
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
