package dds

import (
	"math/rand/v2"
	"testing"

	"github.com/perfagent/subagent/spmi"
)

func TestSlots(t *testing.T) {
	s := NewSlots(32, 128) // 96 bytes of room
	a, _ := s.Alloc(16)
	b, _ := s.Alloc(1) // rounded to 8
	c, _ := s.Alloc(0) // at least 8
	d, _ := s.Alloc(20)
	if a != 32 || b != 48 || c != 56 || d != 64 {
		t.Fatalf("offsets %d %d %d %d", a, b, c, d)
	}
	if n, ok := s.Size(d); !ok || n != 24 {
		t.Fatalf("size of d %d %v", n, ok)
	}
	if s.InUse() != 4 || s.Free() != 40 {
		t.Fatalf("in use %d, free %d", s.InUse(), s.Free())
	}
	_, err := s.Alloc(48)
	wantErr(t, err, spmi.SiCallocFailed, "no free 48-byte slot", "40 bytes free in 1 pieces")
	_, err = s.Alloc(0xffffffff)
	wantErr(t, err, spmi.SiCallocFailed, "4294967296-byte")

	// Free b and c (adjacent), then a: one 40-byte hole at 32.
	for _, off := range []uint32{b, c, a} {
		if _, err := s.Release(off); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.free) != 2 || s.free[0] != (span{32, 32}) {
		t.Fatalf("free list %v", s.free)
	}
	_, err = s.Release(a)
	wantErr(t, err, spmi.SiNotFound, "offset 32")
	_, err = s.Release(d + 8)
	wantErr(t, err, spmi.SiNotFound)
	if x, _ := s.Alloc(32); x != 32 {
		t.Fatalf("first fit gave %d", x)
	}
	if _, err := s.Release(d); err != nil {
		t.Fatal(err)
	}
	if len(s.free) != 1 || s.free[0] != (span{64, 64}) {
		t.Fatalf("free list %v", s.free)
	}
	if full := NewSlots(64, 64); full.Free() != 0 {
		t.Fatal("room in a full area")
	}
}

// Random allocations and releases keep the free list sorted, merged and
// disjoint from the used slots, and everything adds up.
func TestSlotsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const lo, hi = 64, 4096
	s := NewSlots(lo, hi)
	var live []uint32
	for range 5000 {
		if len(live) > 0 && r.IntN(2) == 0 {
			i := r.IntN(len(live))
			if _, err := s.Release(live[i]); err != nil {
				t.Fatal(err)
			}
			live = append(live[:i], live[i+1:]...)
		} else if off, err := s.Alloc(uint32(r.IntN(200))); err == nil {
			live = append(live, off)
		}
		var used uint32
		for _, off := range live {
			n, _ := s.Size(off)
			used += n
		}
		if used+s.Free() != hi-lo {
			t.Fatalf("used %d + free %d != %d", used, s.Free(), hi-lo)
		}
		for i, f := range s.free {
			if f.off < lo || f.off%8 != 0 || f.size == 0 || f.off+f.size > hi {
				t.Fatalf("bad free span %v", f)
			}
			if i > 0 && s.free[i-1].off+s.free[i-1].size >= f.off {
				t.Fatalf("free spans %v and %v touch or overlap", s.free[i-1], f)
			}
			for _, off := range live {
				if off >= f.off && off < f.off+f.size {
					t.Fatalf("slot %d inside free span %v", off, f)
				}
			}
		}
	}
}
