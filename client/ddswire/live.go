package ddswire

import (
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/perfagent/subagent/client/spmierr"
)

// The header fields that change while a supplier runs are read and written
// with atomics through these accessors; mem is the whole mapping, from file
// offset 0. Each one checks its bounds and survives a truncated file.

// Stamp is SiShT as raw bytes. The daemon never interprets it: a supplier
// is alive while its stamp keeps changing, whatever its struct timeval
// layout or byte order.
type Stamp [2]uint64

// LoadStamp reads SiShT. The two words are loaded one after the other; a
// stamp torn between them still differs from the previous one, which is
// all liveness asks.
func LoadStamp(mem []byte) (s Stamp, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer RecoverFault(&err)
	p, err := FieldPtr(mem, OffT, LenT)
	if err != nil {
		return s, err
	}
	w := (*[2]uint64)(p)
	return Stamp{atomic.LoadUint64(&w[0]), atomic.LoadUint64(&w[1])}, nil
}

func load32(mem []byte, off uint64) (v uint32, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer RecoverFault(&err)
	p, err := FieldPtr(mem, off, 4)
	if err != nil {
		return 0, err
	}
	return atomic.LoadUint32((*uint32)(p)), nil
}

func store32(mem []byte, off uint64, v uint32) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer RecoverFault(&err)
	p, err := FieldPtr(mem, off, 4)
	if err != nil {
		return err
	}
	atomic.StoreUint32((*uint32)(p), v)
	return nil
}

// LoadGoAway reads SiShGoAway.
func LoadGoAway(mem []byte) (bool, error) {
	v, err := load32(mem, OffGoAway)
	return v != 0, err
}

// SetGoAway sets SiShGoAway to 1: the daemon gave up on the supplier.
func SetGoAway(mem []byte) error { return store32(mem, OffGoAway, 1) }

// StoreInterval sets SiShInterval (milliseconds between requests).
func StoreInterval(mem []byte, ms int32) error { return store32(mem, OffInterval, uint32(ms)) }

// StoreSubscrib sets SiShSubscrib (values currently requested).
func StoreSubscrib(mem []byte, n int32) error { return store32(mem, OffSubscrib, uint32(n)) }

// LoadGen reads SiShGen.
func LoadGen(mem []byte) (g uint64, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer RecoverFault(&err)
	p, err := FieldPtr(mem, OffGen, 8)
	if err != nil {
		return 0, err
	}
	return atomic.LoadUint64((*uint64)(p)), nil
}

// StoreGen publishes the header: a creator calls it last, after writing
// every other field, with a fresh nonzero generation.
func StoreGen(mem []byte, g uint64) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer RecoverFault(&err)
	if g == 0 {
		return spmierr.Errorf(spmierr.SiBadArgument, "generation 0 means unpublished")
	}
	p, err := FieldPtr(mem, OffGen, 8)
	if err != nil {
		return err
	}
	atomic.StoreUint64((*uint64)(p), g)
	return nil
}

// WriterHoldOff is the longest a writer waits, before a batch, for the
// daemon's copy to end (SiShReading odd; docs/DDS.md §1, Batches). A copy
// takes microseconds; the bound only matters when a daemon died while
// copying, and the libraries then ignore that value of SiShReading until
// it changes.
const WriterHoldOff = time.Millisecond
