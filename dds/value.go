package dds

import (
	"math"
	"runtime/debug"
	"sync/atomic"
	"unsafe"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
)

// ReadValue reads field f from the data area and converts it to its
// presented format. Every load is one aligned atomic load: fields of 1 or 2
// bytes are taken from their aligned 4-byte word, so area must start
// 8-aligned and be a multiple of 8 long (ValidateFile ensures both for a
// mapped file). Only a 16-byte timeval needs two loads; its tv_sec is read
// again and the pair retried once if it moved.
func ReadValue(area []byte, f ddswire.Field) (v spmiwire.Value, err error) {
	if len(area)%8 != 0 || uint64(len(area)) > math.MaxUint32 {
		return spmiwire.NoValue, spmierr.Errorf(spmierr.SiShmemFailed, "data area of %d bytes is not a multiple of 8", len(area))
	}
	if err := f.Check(uint32(len(area))); err != nil {
		return spmiwire.NoValue, err
	}
	if uintptr(unsafe.Pointer(unsafe.SliceData(area)))%8 != 0 {
		return spmiwire.NoValue, spmierr.Errorf(spmierr.SiShmemFailed, "data area does not start 8-aligned in memory")
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer ddswire.RecoverFault(&err)

	off, size := uint64(f.Off), uint64(f.Size)
	var x, y uint64
	switch size {
	case 16:
		p, _ := ddswire.FieldPtr(area, off, 16)
		w := (*[2]uint64)(p)
		for range 2 {
			x = atomic.LoadUint64(&w[0])
			y = atomic.LoadUint64(&w[1])
			if atomic.LoadUint64(&w[0]) == x {
				break
			}
		}
	case 8:
		p, _ := ddswire.FieldPtr(area, off, 8)
		x = atomic.LoadUint64((*uint64)(p))
	default:
		p, _ := ddswire.FieldPtr(area, off&^3, 4)
		x = uint64(atomic.LoadUint32((*uint32)(p)))
		x >>= 8 * (off & 3) // little-endian: lower address, lower bits
		x &= 1<<(8*size) - 1
	}
	return present(f, x, y), nil
}

// present converts raw bits to the presented format.
func present(f ddswire.Field, x, y uint64) spmiwire.Value {
	var (
		u       uint64
		i       int64
		fl      float64
		isFloat bool
		signed  bool
	)
	switch f.Type.Class() {
	case ddswire.ClassUnsigned:
		u = x
	case ddswire.ClassSigned:
		shift := 64 - 8*f.Size
		i, signed = int64(x<<shift)>>shift, true
	case ddswire.ClassFloat:
		if f.Size == 4 {
			fl = float64(math.Float32frombits(uint32(x)))
		} else {
			fl = math.Float64frombits(x)
		}
		isFloat = true
	case ddswire.ClassTimeval:
		sec, usec := int64(x), int64(y)
		if f.Size == 8 {
			sec, usec = int64(int32(uint32(x))), int64(int32(uint32(x>>32)))
		}
		fl, isFloat = float64(sec)+float64(usec)/1e6, true
	}
	if presented(f.Present) == spmiwire.SiFloat {
		switch {
		case isFloat:
			return spmiwire.Float(fl)
		case signed:
			return spmiwire.Float(float64(i))
		}
		return spmiwire.Float(float64(u))
	}
	switch {
	case isFloat:
		if math.IsNaN(fl) || math.IsInf(fl, 0) {
			return spmiwire.NoValue
		}
		// Truncated toward zero and clamped, as a C cast would without the UB.
		switch {
		case fl >= math.MaxInt64:
			return spmiwire.Int(math.MaxInt64)
		case fl <= math.MinInt64:
			return spmiwire.Int(math.MinInt64)
		}
		return spmiwire.Int(int64(fl))
	case signed:
		return spmiwire.Int(i)
	}
	return spmiwire.Uint(u)
}

// ZeroSlot clears a volatile slot before its context becomes visible, with
// aligned 8-byte atomic stores, so a new instance never shows values left
// by the last one.
func ZeroSlot(area []byte, off, size uint32) (err error) {
	if off%8 != 0 || size%8 != 0 {
		return spmierr.Errorf(spmierr.SiBadArgument, "slot [%d, +%d) is not 8-aligned", off, size)
	}
	p, err := ddswire.FieldPtr(area, uint64(off), uint64(size))
	if err != nil || size == 0 {
		return err
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer ddswire.RecoverFault(&err)
	w := unsafe.Slice((*uint64)(p), size/8)
	for i := range w {
		atomic.StoreUint64(&w[i], 0)
	}
	return nil
}
