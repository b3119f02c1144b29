package ddswire

import (
	"unsafe"

	"github.com/perfagent/subagent/client/spmierr"
)

// RecoverFault turns a memory fault into an error. A supplier can shrink
// its file under the daemon's mapping (and a daemon can vanish under a
// supplier's); touching the lost pages raises SIGBUS. Functions that touch
// a mapping run with debug.SetPanicOnFault(true) and defer RecoverFault
// directly (defer ddswire.RecoverFault(&err)), so that fault becomes an
// error instead of killing the process. Any other panic goes on.
func RecoverFault(err *error) {
	r := recover()
	if r == nil {
		return
	}
	if f, ok := r.(interface{ Addr() uintptr }); ok {
		*err = spmierr.Errorf(spmierr.SiShmemFailed, "memory fault at %#x in the shared file (truncated by its owner?)", f.Addr())
		return
	}
	panic(r)
}

// FieldPtr returns a pointer to b[off:off+size] after checking bounds and
// the alignment of the address itself (what the atomics require, also on
// 386).
func FieldPtr(b []byte, off uint64, size uint64) (unsafe.Pointer, error) {
	if off > uint64(len(b)) || size > uint64(len(b))-off {
		return nil, spmierr.Errorf(spmierr.SiBadArgument, "field [%d, +%d) outside the %d-byte mapping", off, size, len(b))
	}
	p := unsafe.Pointer(unsafe.SliceData(b[off:]))
	if a := max(min(size, 8), 1); uintptr(p)%uintptr(a) != 0 {
		return nil, spmierr.Errorf(spmierr.SiShmemFailed, "field at %d is not %d-byte aligned in memory", off, a)
	}
	return p, nil
}
