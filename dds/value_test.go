package dds

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/ddswire/ddswiretest"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
)

func TestReadValueConverts(t *testing.T) {
	area := ddswiretest.Aligned(64)
	put := func(off int, v uint64, size int) {
		for i := 0; i < size; i++ {
			area[off+i] = byte(v >> (8 * i))
		}
	}
	put(0, 0xfffffffffffffffe, 8) // -2 or 2^64-2
	put(8, 0x80000001, 4)         // int32 -2147483647
	put(12, uint64(math.Float32bits(-2.75)), 4)
	put(16, math.Float64bits(1e300), 8)
	put(24, 0xff, 1) // at offset 24
	put(25, 0x7f, 1)
	put(26, 0x8000, 2)
	put(28, 0x1234, 2)
	put(30, 0xfe, 1)
	put(32, 1700000000, 8) // timeval {sec, usec} of 64-bit words
	put(40, 250000, 8)
	put(48, 1700000000|uint64(500000)<<32, 8) // timeval of 32-bit words
	put(56, math.Float64bits(math.NaN()), 8)

	for _, tc := range []struct {
		f    ddswire.Field
		want spmiwire.Value
	}{
		{fld(0, 8, ddswire.SiULong, ddswire.SiLong), spmiwire.Uint(math.MaxUint64 - 1)},
		{fld(0, 8, ddswire.SiLong, ddswire.SiLong), spmiwire.Int(-2)},
		{fld(0, 8, ddswire.SiPtr, ddswire.SiULong), spmiwire.Uint(math.MaxUint64 - 1)},
		{fld(8, 4, ddswire.SiInt, ddswire.SiLong), spmiwire.Int(-2147483647)},
		{fld(8, 4, ddswire.SiUInt, ddswire.SiLong), spmiwire.Uint(0x80000001)},
		{fld(8, 4, ddswire.SiUnsign, ddswire.SiFloat), spmiwire.Float(0x80000001)},
		{fld(8, 4, ddswire.SiInt, ddswire.SiFloat), spmiwire.Float(-2147483647)},
		{fld(12, 4, ddswire.SiFloat, ddswire.SiFloat), spmiwire.Float(-2.75)},
		{fld(12, 4, ddswire.SiFloat, ddswire.SiLong), spmiwire.Int(-2)}, // truncated toward zero
		{fld(16, 8, ddswire.SiDouble, ddswire.SiDouble), spmiwire.Float(1e300)},
		{fld(16, 8, ddswire.SiDouble, ddswire.SiLong), spmiwire.Int(math.MaxInt64)},
		{fld(24, 1, ddswire.SiChar, ddswire.SiLong), spmiwire.Uint(0xff)},
		{fld(24, 1, ddswire.SiShort, ddswire.SiLong), spmiwire.Int(-1)},
		{fld(25, 1, ddswire.SiUShort, ddswire.SiLong), spmiwire.Uint(0x7f)},
		{fld(26, 2, ddswire.SiShort, ddswire.SiLong), spmiwire.Int(-32768)},
		{fld(26, 2, ddswire.SiUShort, ddswire.SiLong), spmiwire.Uint(0x8000)},
		{fld(28, 2, ddswire.SiUShort, ddswire.SiLong), spmiwire.Uint(0x1234)},
		{fld(30, 1, ddswire.SiChar, ddswire.SiLong), spmiwire.Uint(0xfe)},
		{fld(24, 4, ddswire.SiUInt, ddswire.SiLong), spmiwire.Uint(0xfe12348000_7fff&^0xffffffff00000000 | 0xfe123480_00007fff&0xffffffff)},
		{fld(32, 16, ddswire.SiTimeval, ddswire.SiFloat), spmiwire.Float(1700000000.25)},
		{fld(48, 8, ddswire.SiTimeval, ddswire.SiFloat), spmiwire.Float(1700000000.5)},
		{fld(48, 8, ddswire.SiTimeval, ddswire.SiLong), spmiwire.Int(1700000000)},
		{fld(56, 8, ddswire.SiDouble, ddswire.SiFloat), spmiwire.NoValue},
		{fld(56, 8, ddswire.SiDouble, ddswire.SiLong), spmiwire.NoValue},
	} {
		got, err := ReadValue(area, tc.f)
		if err != nil {
			t.Errorf("%+v: %v", tc.f, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%+v: got %v, want %v", tc.f, got, tc.want)
		}
	}
	put(16, math.Float64bits(-1e300), 8)
	if v, _ := ReadValue(area, fld(16, 8, ddswire.SiDouble, ddswire.SiLong)); v != spmiwire.Int(math.MinInt64) {
		t.Errorf("-1e300 as long: %v", v)
	}
}

func TestReadValueRejects(t *testing.T) {
	area := ddswiretest.Aligned(64)
	for _, tc := range []struct {
		name string
		area []byte
		f    ddswire.Field
		code spmierr.Code
		sub  string
	}{
		{"past end", area, fld(64, 8, ddswire.SiULong, ddswire.SiLong), spmierr.SiBadArgument, "ends past the 64-byte area"},
		{"straddles end", area, fld(60, 8, ddswire.SiULong, ddswire.SiLong), spmierr.SiBadArgument, "not 8-byte aligned"},
		{"wraps", area, fld(0xfffffff8, 8, ddswire.SiULong, ddswire.SiLong), spmierr.SiBadArgument, "ends past"},
		{"misaligned 8", area, fld(4, 8, ddswire.SiULong, ddswire.SiLong), spmierr.SiBadArgument, "not 8-byte aligned"},
		{"misaligned 4", area, fld(2, 4, ddswire.SiUInt, ddswire.SiLong), spmierr.SiBadArgument, "not 4-byte aligned"},
		{"misaligned 2", area, fld(1, 2, ddswire.SiUShort, ddswire.SiLong), spmierr.SiBadArgument, "not 2-byte aligned"},
		{"misaligned timeval", area, fld(4, 16, ddswire.SiTimeval, ddswire.SiFloat), spmierr.SiBadArgument, "not 8-byte aligned"},
		{"bad size", area, fld(0, 3, ddswire.SiULong, ddswire.SiLong), spmierr.SiBadArgument, "cannot be 3 bytes"},
		{"size 0", area, fld(0, 0, ddswire.SiULong, ddswire.SiLong), spmierr.SiBadArgument, "cannot be 0 bytes"},
		{"bad type", area, fld(0, 8, 13, ddswire.SiLong), spmierr.SiBadArgument, "source type 13"},
		{"bad presented", area, fld(0, 8, ddswire.SiLong, 99), spmierr.SiBadArgument, "data_type 99"},
		{"area not multiple of 8", area[:60], fld(0, 8, ddswire.SiULong, ddswire.SiLong), spmierr.SiShmemFailed, "not a multiple of 8"},
		{"area misaligned", area[4:60], fld(0, 4, ddswire.SiUInt, ddswire.SiLong), spmierr.SiShmemFailed, "8-aligned"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := ReadValue(tc.area, tc.f)
			if v.OK() {
				t.Fatalf("read %v", v)
			}
			ddswiretest.WantErr(t, err, tc.code, tc.sub)
		})
	}
}

// A writer storing whole 64-bit values atomically; the reader must only
// ever see one of them, never a mix (the race detector also watches).
func TestReadValueNeverTorn(t *testing.T) {
	area := ddswiretest.Aligned(32)
	w := (*uint64)(unsafe.Pointer(&area[8]))
	h := (*uint32)(unsafe.Pointer(&area[16]))
	const a, b = 0x0123456789abcdef, 0xfedcba9876543210
	atomic.StoreUint64(w, a)
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			if i%2 == 0 {
				atomic.StoreUint64(w, b)
				atomic.StoreUint32(h, 0xffff0000)
			} else {
				atomic.StoreUint64(w, a)
				atomic.StoreUint32(h, 0x0000ffff)
			}
		}
	}()
	defer func() { stop.Store(true); wg.Wait() }()
	for range 20000 {
		v, err := ReadValue(area, fld(8, 8, ddswire.SiULong, ddswire.SiLong))
		if err != nil {
			t.Fatal(err)
		}
		if u := v.Uint64(); u != a && u != b {
			t.Fatalf("torn read %#x", u)
		}
		v, _ = ReadValue(area, fld(18, 2, ddswire.SiUShort, ddswire.SiLong))
		if u := v.Uint64(); u != 0 && u != 0xffff {
			t.Fatalf("torn 16-bit read %#x", u)
		}
	}
}

func TestZeroSlot(t *testing.T) {
	area := ddswiretest.Aligned(64)
	for i := range area {
		area[i] = 0xaa
	}
	if err := ZeroSlot(area, 16, 32); err != nil {
		t.Fatal(err)
	}
	for i, c := range area {
		if want := byte(0xaa); i >= 16 && i < 48 {
			want = 0
			if c != want {
				t.Fatalf("byte %d is %#x", i, c)
			}
		} else if c != want {
			t.Fatalf("byte %d outside the slot changed to %#x", i, c)
		}
	}
	if err := ZeroSlot(area, 64, 0); err != nil {
		t.Fatalf("empty slot at the end: %v", err)
	}
	ddswiretest.WantErr(t, ZeroSlot(area, 4, 8), spmierr.SiBadArgument, "not 8-aligned")
	ddswiretest.WantErr(t, ZeroSlot(area, 8, 12), spmierr.SiBadArgument, "not 8-aligned")
	ddswiretest.WantErr(t, ZeroSlot(area, 56, 16), spmierr.SiBadArgument, "outside the 64-byte mapping")
	ddswiretest.WantErr(t, ZeroSlot(area[4:], 0, 8), spmierr.SiShmemFailed, "aligned")
}

// fld is Field{off, size, typ, pres}.
func fld(off, size uint32, typ, pres ddswire.DataType) ddswire.Field {
	return ddswire.Field{Off: off, Size: size, Type: typ, Present: pres}
}
