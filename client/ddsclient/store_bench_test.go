//go:build go1.24

// The benchmarks use testing.B.Loop (Go 1.24); the module itself needs
// only Go 1.22.

package ddsclient

import (
	"sync/atomic"
	"testing"
)

// The floor for BenchmarkCounterSet, measured beside it: the same atomic
// store into ordinary memory (a Set is that plus loading the handle's
// pointer), and a plain store that the compiler is not allowed to drop.
var sink uint64

func BenchmarkAtomicStoreFloor(b *testing.B) {
	var v uint64
	for i := 0; b.Loop(); i++ {
		atomic.StoreUint64(&v, uint64(i))
	}
	sink = v
}

func BenchmarkPlainStoreFloor(b *testing.B) {
	p := new(uint64)
	for i := 0; b.Loop(); i++ {
		*p = uint64(i)
	}
	sink = *p
}

func BenchmarkCounterSet(b *testing.B) {
	g := newGuide()
	start(b, newFake(b), g, nil)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		g.gadgets.Set(uint64(i))
	}
}

func BenchmarkCounterSetAutoStamp(b *testing.B) {
	g := newGuide()
	start(b, newFake(b), g, &Options{AutoStamp: true})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		g.gadgets.Set(uint64(i))
	}
}

// A batch of four Sets: the Sets, two atomic increments and the stamp
// (a clock read), and no allocation.
func BenchmarkUpdate4(b *testing.B) {
	g := newGuide()
	s, _ := start(b, newFake(b), g, nil)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.Update(func() {
			g.gadgets.Set(uint64(i))
			g.widgets.Set(uint64(i))
			g.level.Set(int64(i))
			g.ratio.Set(float64(i))
		})
	}
}
