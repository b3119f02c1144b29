package dds

import (
	"unsafe"

	"github.com/perfagent/subagent/spmi"
)

// A supplier can shrink its file under the daemon's mapping; touching the
// lost pages raises SIGBUS. Functions that touch a mapping run with
// debug.SetPanicOnFault(true) and defer guard, so that fault becomes an
// error for that supplier instead of killing the daemon.
func guard(err *error) {
	r := recover()
	if r == nil {
		return
	}
	if f, ok := r.(interface{ Addr() uintptr }); ok {
		*err = spmi.Errorf(spmi.SiShmemFailed, "memory fault at %#x in the shared file (truncated by its owner?)", f.Addr())
		return
	}
	panic(r)
}

// at returns a pointer to b[off:off+size] after checking bounds and the
// alignment of the address itself (what the atomics require, also on 386).
func at(b []byte, off uint64, size uint64) (unsafe.Pointer, error) {
	if off > uint64(len(b)) || size > uint64(len(b))-off {
		return nil, spmi.Errorf(spmi.SiBadArgument, "field [%d, +%d) outside the %d-byte mapping", off, size, len(b))
	}
	p := unsafe.Pointer(unsafe.SliceData(b[off:]))
	if a := max(min(size, 8), 1); uintptr(p)%uintptr(a) != 0 {
		return nil, spmi.Errorf(spmi.SiShmemFailed, "field at %d is not %d-byte aligned in memory", off, a)
	}
	return p, nil
}
