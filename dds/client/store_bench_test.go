package client

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
