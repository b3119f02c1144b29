package rtimearm

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/client/armring"
)

func benchProc(b *testing.B, g armring.Geometry) (*armring.File, *proc, *Registry) {
	f, fd, unmap, err := createFile(g, 1, 1)
	if err != nil {
		b.Fatal(err)
	}
	unix.Close(fd)
	b.Cleanup(unmap)
	reg := NewRegistry(Limits{MaxApps: 1, MaxTrans: 1}, 75, time.Minute, nil, nil)
	f.PublishApp(0, &armring.App{ID: 1, Key: "a"})
	f.PublishTran(0, &armring.Tran{ID: 2, Key: "t", Types: [7]uint32{armring.Counter64}})
	return f, &proc{f: f, unmap: func() {}}, reg
}

// BenchmarkDrain is the daemon's cost per record (an instance with a
// metric value): decode and account it (records/s is the drain rate on
// one core).
func BenchmarkDrain(b *testing.B) {
	g := armring.Geometry{Slots: 1 << 16, Apps: 1, Trans: 1}
	f, p, reg := benchProc(b, g)
	rec := armring.Record{Mask: 1, Values: [6]uint64{1}}
	b.ResetTimer()
	for done := 0; done < b.N; {
		b.StopTimer()
		n := min(b.N-done, int(g.Slots))
		for i := range n {
			rec.Dur = uint64(1000 + i%5000)
			f.Post(&rec)
		}
		b.StartTimer()
		p.drain(reg, time.Now())
		done += n
	}
	b.StopTimer()
	if c := p.trans[0].t.metrics[0].total; c != float64(b.N) {
		b.Fatalf("metric1 %v after %d records", c, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkDrainTotals is the daemon's cost to take one transaction's
// totals (1,000 instances over 50 bins) at a drain, whatever their number.
func BenchmarkDrainTotals(b *testing.B) {
	f, p, reg := benchProc(b, armring.Geometry{Slots: 16, Apps: 1, Trans: 1})
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		for i := range 1000 {
			f.Complete(0, armring.Good, uint64(1000+i*i*100))
		}
		b.StartTimer()
		p.drain(reg, time.Now())
	}
	b.StopTimer()
	if c := p.trans[0].t.count; c != uint64(b.N)*1000 {
		b.Fatalf("count %d after %d drains", c, b.N)
	}
}

// shipped is the file geometry of the shipped settings (configs/subagent.yaml).
var shipped = armring.Geometry{Slots: 16384, Apps: 64, Trans: 512}

// BenchmarkCreateFile is the daemon's cost of one ring at a Hello with the
// shipped geometry: the memfd, its size, seals, mapping and slots, then
// freeing it as at the process's departure.
func BenchmarkCreateFile(b *testing.B) {
	for range b.N {
		_, fd, unmap, err := createFile(shipped, 1, 1)
		if err != nil {
			b.Fatal(err)
		}
		unix.Close(fd)
		unmap()
	}
}
