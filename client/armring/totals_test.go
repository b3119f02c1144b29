package armring

import (
	"sync"
	"testing"
)

// Producers complete instances while the daemon takes: every completion
// is taken exactly once, with the right extremes.
func TestTotalsTakenOnceUnderConcurrentProducers(t *testing.T) {
	f := testFile(t, Geometry{Slots: 16, Apps: 1, Trans: 2})
	const producers, each = 4, 20000
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				switch {
				case i%100 == 1:
					f.Complete(1, Abort, 5)
				case i%100 == 2:
					f.Complete(1, Failed, 5)
				default:
					f.Complete(1, Good, uint64(1000+p*each+i)) // 1 µs to 81 µs
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var good, ab, fl uint64
	lo, hi := uint64(MaxDur), uint64(0)
	var tot Totals
	take := func() {
		if !f.Take(1, &tot) {
			return
		}
		good, ab, fl = good+tot.Good, ab+tot.Aborted, fl+tot.Failed
		if tot.Good > 0 {
			var n uint64
			for _, c := range tot.Bins {
				n += c
			}
			if n != tot.Good || tot.Min > tot.Mean || tot.Mean > tot.Max || tot.Last < tot.Min || tot.Last > tot.Max {
				t.Fatalf("inconsistent take %+v (bins sum to %d)", tot, n)
			}
			lo, hi = min(lo, tot.Min), max(hi, tot.Max)
		}
	}
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		take()
	}
	take()
	if good != producers*each*98/100 || ab != producers*each/100 || fl != producers*each/100 {
		t.Fatalf("took %d good %d aborted %d failed", good, ab, fl)
	}
	if lo != 1000 || hi != 1000+producers*each-1 {
		t.Fatalf("min %d max %d", lo, hi)
	}
	if f.Take(0, &tot) || f.Untaken(1) != 0 {
		t.Fatal("totals left behind")
	}
}

func TestUntakenCountsWhatNoDaemonTook(t *testing.T) {
	f := testFile(t, Geometry{Slots: 16, Apps: 1, Trans: 1})
	for _, s := range []uint8{Good, Good, Abort, Failed} {
		f.Complete(0, s, 7)
	}
	if n := f.Untaken(0); n != 4 {
		t.Fatalf("untaken %d, want 4", n)
	}
}

// FuzzTakeHostile writes arbitrary bytes over a transaction's counters
// (a process may): a take is bounded and consistent whatever they hold.
func FuzzTakeHostile(f *testing.F) {
	g := Geometry{Slots: 16, Apps: 1, Trans: 1}
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0}, uint16(ctrSum))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, uint16(ctrBins+8*200))
	f.Fuzz(func(t *testing.T, b []byte, at uint16) {
		file := testFile(t, g)
		file.Complete(0, Good, 12345)
		off := int(g.CtrOff()) + int(at)%CounterLen
		copy(file.Bytes()[off:int(g.CtrOff())+CounterLen], b)
		var tot Totals
		file.Take(0, &tot)
		var n uint64
		for _, c := range tot.Bins {
			n += c
		}
		if tot.Good > 0 && (n != tot.Good || tot.Min > tot.Mean || tot.Mean > tot.Max || tot.Max > MaxDur ||
			tot.Last < tot.Min || tot.Last > tot.Max) {
			t.Fatalf("inconsistent take %+v", tot)
		}
		if tot.Good > MaxCount || tot.Aborted > MaxCount || tot.Failed > MaxCount {
			t.Fatalf("unbounded take %+v", tot)
		}
	})
}
