package dds

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/perfagent/subagent/client/ddswire/ddswiretest"
	"github.com/perfagent/subagent/client/spmierr"
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
	ddswiretest.WantErr(t, err, spmierr.SiCallocFailed, "no free 48-byte slot", "40 bytes free in 1 pieces")
	_, err = s.Alloc(0xffffffff)
	ddswiretest.WantErr(t, err, spmierr.SiCallocFailed, "4294967296-byte")

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
	ddswiretest.WantErr(t, err, spmierr.SiNotFound, "offset 32")
	_, err = s.Release(d + 8)
	ddswiretest.WantErr(t, err, spmierr.SiNotFound)
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

func TestSlotsAllocAt(t *testing.T) {
	s := NewSlots(32, 128) // one free span [32, 128)
	// Splitting: a slot in the middle leaves a span on each side.
	if err := s.AllocAt(64, 16); err != nil {
		t.Fatal(err)
	}
	if want := []span{{32, 32}, {80, 48}}; !slices.Equal(s.free, want) {
		t.Fatalf("free list %v, want %v", s.free, want)
	}
	// At the start and at the end of a span: no empty span is left.
	if err := s.AllocAt(32, 1); err != nil { // rounded to 8
		t.Fatal(err)
	}
	if err := s.AllocAt(120, 8); err != nil {
		t.Fatal(err)
	}
	if want := []span{{40, 24}, {80, 40}}; !slices.Equal(s.free, want) {
		t.Fatalf("free list %v, want %v", s.free, want)
	}
	// A whole span: it disappears.
	if err := s.AllocAt(40, 24); err != nil {
		t.Fatal(err)
	}
	if want := []span{{80, 40}}; !slices.Equal(s.free, want) {
		t.Fatalf("free list %v, want %v", s.free, want)
	}
	if n, ok := s.Size(40); !ok || n != 24 || s.InUse() != 4 || s.Free() != 40 {
		t.Fatalf("slot at 40: %d %v; in use %d, free %d", n, ok, s.InUse(), s.Free())
	}

	for _, tc := range []struct {
		off, size uint32
		code      spmierr.Code
		want      []string
	}{
		{84, 8, spmierr.SiBadArgument, []string{"offset 84", "multiple of 8"}},
		{24, 8, spmierr.SiBadArgument, []string{"offset 24", "outside the volatile part [32, 128)"}},
		{120, 16, spmierr.SiBadArgument, []string{"offset 120 (16 bytes)", "outside"}},
		{112, 0xffffffff, spmierr.SiBadArgument, []string{"offset 112", "outside"}},
		{64, 8, spmierr.SiCallocFailed, []string{"offset 64", "overlaps a slot in use"}}, // a used slot's start
		{72, 8, spmierr.SiCallocFailed, []string{"offset 72", "overlaps"}},               // inside a used slot
		{112, 16, spmierr.SiCallocFailed, []string{"offset 112 (16 bytes)", "overlaps"}}, // free start, used end
	} {
		ddswiretest.WantErr(t, s.AllocAt(tc.off, tc.size), tc.code, tc.want...)
	}
	if s.InUse() != 4 || s.Free() != 40 {
		t.Fatal("a refused AllocAt changed the slots")
	}

	// Merging after AllocAt: releasing everything gives one span back,
	// and first fit then starts at the bottom again.
	for _, off := range []uint32{64, 32, 120, 40} {
		if _, err := s.Release(off); err != nil {
			t.Fatal(err)
		}
	}
	if want := []span{{32, 96}}; !slices.Equal(s.free, want) {
		t.Fatalf("free list %v, want %v", s.free, want)
	}
	if off, _ := s.Alloc(8); off != 32 {
		t.Fatalf("first fit after merging gave %d", off)
	}
}

// A daemon restart: a fresh allocator given the offsets a supplier had,
// hole included, reproduces them exactly, in any order.
func TestSlotsAllocAtReplay(t *testing.T) {
	old := NewSlots(16, 256)
	var offs []uint32
	for _, n := range []uint32{24, 8, 40, 16} {
		off, _ := old.Alloc(n)
		offs = append(offs, off)
	}
	old.Release(offs[1]) // the hole
	live := map[uint32]uint32{offs[3]: 16, offs[0]: 24, offs[2]: 40}
	s := NewSlots(16, 256)
	for off, n := range live {
		if err := s.AllocAt(off, n); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(s.free, old.free) {
		t.Fatalf("free list %v, the old one %v", s.free, old.free)
	}
	if off, _ := s.Alloc(8); off != offs[1] {
		t.Fatalf("the hole at %d not reused: %d", offs[1], off)
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
		} else if r.IntN(3) == 0 {
			// AllocAt at a random aligned offset: it succeeds exactly
			// when the slot lies in one free span.
			off, n := lo+8*uint32(r.IntN((hi-lo)/8)), uint32(r.IntN(200))
			want := false
			for _, f := range s.free {
				want = want || off >= f.off && uint64(off)+slotBytes(n) <= uint64(f.off+f.size)
			}
			if err := s.AllocAt(off, n); (err == nil) != want {
				t.Fatalf("AllocAt(%d, %d) on %v: %v", off, n, s.free, err)
			} else if err == nil {
				live = append(live, off)
			}
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
