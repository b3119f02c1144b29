package armring

import "testing"

// What a transaction's latency thresholds (service level objectives)
// add to each good completion: a load per threshold, an add when slower.
func BenchmarkComplete(b *testing.B) {
	for _, c := range []struct {
		name string
		th   []uint64
	}{{"nothresholds", nil}, {"4thresholds", []uint64{1e5, 2e5, 3e5, 4e5}}} {
		b.Run(c.name, func(b *testing.B) {
			f := testFile(b, Geometry{Slots: 16, Apps: 1, Trans: 1})
			f.SetThresholds(0, c.th)
			for i := range b.N {
				f.Complete(0, Good, uint64(i&0x3ffff)*2)
			}
		})
	}
}
