package ddsclient

import (
	"math"
	"sync/atomic"
	"unsafe"
)

// cell points at one 8-aligned 64-bit field of the mapping. The pointer is
// atomic so the library can move a handle (DelCx, Exit) while
// other goroutines write through it; until Start and after Exit it points
// at a private word, so a stray Set never faults.
type cell struct {
	p     atomic.Pointer[uint64]
	stamp *Supplier // non-nil with Options.AutoStamp
}

func newCell() *cell {
	c := &cell{}
	c.park()
	return c
}

// park points the cell at private memory.
func (c *cell) park() { c.p.Store(new(uint64)) }

func (c *cell) bind(area []byte, off uint32) {
	c.p.Store((*uint64)(unsafe.Pointer(&area[off])))
}

func (c *cell) stamped() {
	if c.stamp != nil {
		c.stamp.Stamp()
	}
}

// Counter is an unsigned 64-bit counter field (SiCounter, SiULong).
type Counter struct{ c *cell }

// Set stores v with one atomic store.
func (h *Counter) Set(v uint64) { atomic.StoreUint64(h.c.p.Load(), v); h.c.stamped() }

// Add adds d atomically.
func (h *Counter) Add(d uint64) { atomic.AddUint64(h.c.p.Load(), d); h.c.stamped() }

// Inc adds 1.
func (h *Counter) Inc() { h.Add(1) }

// Load reads the current value.
func (h *Counter) Load() uint64 { return atomic.LoadUint64(h.c.p.Load()) }

// Gauge is a signed 64-bit level field (SiQuantity, SiLong).
type Gauge struct{ c *cell }

func (h *Gauge) ptr() *int64 { return (*int64)(unsafe.Pointer(h.c.p.Load())) }

// Set stores v with one atomic store.
func (h *Gauge) Set(v int64) { atomic.StoreInt64(h.ptr(), v); h.c.stamped() }

// Add adds d atomically.
func (h *Gauge) Add(d int64) { atomic.AddInt64(h.ptr(), d); h.c.stamped() }

// Load reads the current value.
func (h *Gauge) Load() int64 { return atomic.LoadInt64(h.ptr()) }

// Float is a float64 field (SiDouble).
type Float struct{ c *cell }

// Set stores v with one atomic store.
func (h *Float) Set(v float64) { atomic.StoreUint64(h.c.p.Load(), math.Float64bits(v)); h.c.stamped() }

// Add adds d with a compare-and-swap loop.
func (h *Float) Add(d float64) {
	p := h.c.p.Load()
	for {
		old := atomic.LoadUint64(p)
		if atomic.CompareAndSwapUint64(p, old, math.Float64bits(math.Float64frombits(old)+d)) {
			break
		}
	}
	h.c.stamped()
}

// Load reads the current value.
func (h *Float) Load() float64 { return math.Float64frombits(atomic.LoadUint64(h.c.p.Load())) }
