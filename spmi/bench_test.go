package spmi

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkBuild100k measures one refresh's tree work at scale: 1,000
// instances of 100 statistics added to a Builder and published as a
// Snapshot with both OID indexes.
func BenchmarkBuild100k(b *testing.B) {
	procCx := CxDesc{Name: "Proc", Descr: "Processes", ASN: 10, Inst: SiContInst}
	tpl := CxDesc{Descr: "Process"}
	stats := make([]StatDesc, 100)
	for i := range stats {
		stats[i] = StatDesc{Name: fmt.Sprintf("s%d", i), Descr: "x", ASN: uint32(i + 1), Val: SiCounter}
	}
	names := make([]string, 1000)
	for i := range names {
		names[i] = fmt.Sprint(i*7 + 1)
	}
	vals := make([]Value, 100)
	for i := range vals {
		vals[i] = Uint(uint64(i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bl := NewBuilder(testBase, nil, time.Now())
		p, _ := bl.Context(nil, &procCx)
		for j, n := range names {
			inst, err := bl.Instance(p, &tpl, n, "", uint32(j*7+1))
			if err != nil {
				b.Fatal(err)
			}
			if err := bl.Stats(inst, stats, vals); err != nil {
				b.Fatal(err)
			}
		}
		if s := bl.Finish(); s.NumStats != 100000 {
			b.Fatal(s.NumStats)
		}
	}
}
