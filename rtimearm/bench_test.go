package rtimearm

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/armring"
)

// BenchmarkDrain is the daemon's cost per record: decode and account one
// completed instance (records/s is the drain rate on one core).
func BenchmarkDrain(b *testing.B) {
	g := armring.Geometry{Slots: 1 << 16, Apps: 1, Trans: 1}
	f, fd, unmap, err := createFile(g, 1, 1)
	if err != nil {
		b.Fatal(err)
	}
	unix.Close(fd)
	defer unmap()
	reg := NewRegistry(Limits{MaxApps: 1, MaxTrans: 1}, 75, time.Minute, nil, nil)
	f.PublishApp(0, &armring.App{ID: 1, Key: "a"})
	f.PublishTran(0, &armring.Tran{ID: 2, Key: "t"})
	p := &proc{f: f, unmap: func() {}}
	rec := armring.Record{Dur: 1500}
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
	if c := p.trans[0].t.count; c != uint64(b.N) {
		b.Fatalf("count %d after %d records", c, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
