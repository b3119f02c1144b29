//go:build linux

package dds

import (
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/ddswire/ddswiretest"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/testutil"
)

func header32(mem []byte, off int) *uint32 { return (*uint32)(unsafe.Pointer(&mem[off])) }

// ReadConsistent copies when no batch is open, copies again when one
// began during the copy, gives up within its bounds when one stays open,
// and leaves SiShReading even and changed.
func TestReadConsistent(t *testing.T) {
	mem := ddswiretest.Aligned(ddswire.HeaderSize + 64)
	begun, ended, reading := header32(mem, ddswire.OffBatch), header32(mem, ddswire.OffBatchEnd), header32(mem, ddswire.OffReading)

	copies := 0
	ok, err := ReadConsistent(mem, 0, func() error {
		copies++
		if r := atomic.LoadUint32(reading); r&1 != 1 {
			t.Errorf("SiShReading %d while copying, want odd", r)
		}
		return nil
	})
	if !ok || err != nil || copies != 1 {
		t.Fatalf("quiet file: ok %v, %v, %d copies", ok, err, copies)
	}
	if r := atomic.LoadUint32(reading); r != 2 {
		t.Fatalf("SiShReading %d after the read, want 2", r)
	}

	// A batch begins during the first copy and ends before the second.
	copies = 0
	ok, _ = ReadConsistent(mem, 0, func() error {
		if copies++; copies == 1 {
			atomic.AddUint32(begun, 1)
			atomic.AddUint32(ended, 1)
		}
		return nil
	})
	if !ok || copies != 2 {
		t.Fatalf("batch during the copy: ok %v after %d copies, want a second copy", ok, copies)
	}

	// A batch that stays open: no copy at all, and the read ends.
	atomic.AddUint32(begun, 1)
	copies = 0
	ok, err = ReadConsistent(mem, 0, func() error { copies++; return nil })
	if ok || err != nil || copies != 0 {
		t.Fatalf("open batch: ok %v, %v, %d copies", ok, err, copies)
	}

	// Batches that begin during every copy: at most ReadCopies copies.
	atomic.StoreUint32(ended, atomic.LoadUint32(begun))
	copies = 0
	ok, _ = ReadConsistent(mem, 0, func() error {
		copies++
		atomic.AddUint32(begun, 1)
		atomic.AddUint32(ended, 1)
		return nil
	})
	if ok || copies != ReadCopies {
		t.Fatalf("a batch in every copy: ok %v after %d copies, want %d", ok, copies, ReadCopies)
	}

	// A value of SiShReading a dead daemon left odd changes at once.
	atomic.StoreUint32(reading, 7)
	ReadConsistent(mem, 0, func() error {
		if r := atomic.LoadUint32(reading); r != 9 {
			t.Errorf("SiShReading %d while copying after a stuck 7, want 9", r)
		}
		return nil
	})
	if _, err := ReadConsistent(mem[:ddswire.OffBatch], 0, func() error { return nil }); spmierr.CodeOf(err) != spmierr.SiBadArgument {
		t.Fatalf("short mapping: %v", err)
	}
}

// A read with nothing to fall back on waits for an open batch to end: the
// writer ends it once the read has begun (SiShReading odd), and the read
// copies then. Without the wait the same read gives up; with a batch that
// never ends, the wait is bounded.
func TestReadConsistentWaitsForAnOpenBatch(t *testing.T) {
	mem := ddswiretest.Aligned(ddswire.HeaderSize + 64)
	begun, ended, reading := header32(mem, ddswire.OffBatch), header32(mem, ddswire.OffBatchEnd), header32(mem, ddswire.OffReading)
	atomic.AddUint32(begun, 1)
	if ok, _ := ReadConsistent(mem, 0, func() error { return nil }); ok {
		t.Fatal("read without waiting copied while a batch was open")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 10_000_000 { // the read has begun: end the batch
			if atomic.LoadUint32(reading)&1 == 1 {
				atomic.AddUint32(ended, 1)
				return
			}
			runtime.Gosched()
		}
	}()
	copies := 0
	ok, err := ReadConsistent(mem, time.Minute, func() error { copies++; return nil })
	<-done
	if !ok || err != nil || copies != 1 {
		t.Fatalf("waiting read: ok %v, %v, %d copies; want one consistent copy", ok, err, copies)
	}
	atomic.AddUint32(begun, 1) // open for good
	start := time.Now()
	if ok, _ := ReadConsistent(mem, ReadWait, func() error { return nil }); ok {
		t.Fatal("copied while a batch stayed open")
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("a stuck batch held the read %v, the wait is %v", d, ReadWait)
	}
}

// A supplier whose batch never ends (a lying or stuck one) cannot stall a
// refresh: its previous consistent values are served, a context that never
// had a consistent read has none, the event is counted every time and
// logged once; once the batch ends, current values are served again.
func TestServerServesLastConsistentValues(t *testing.T) {
	lg := &testutil.Buffer{}
	s, h := testServer(t, func(s *Server) {
		s.reg.log, s.reg.staleWarn = slog.New(slog.NewTextHandler(lg, nil)), time.Hour
	})
	ts := newSupFile(t, ddswiretest.GuideInit())
	ts.register(s, spmierr.SiSuccess)
	ts.put(0, 1)
	ts.put(8, 1)
	wantNode(t, h, "DDS/IBM/Test/gadgets", "99.2.220.1", 1)

	begun := header32(ts.mem, ddswire.OffBatch)
	atomic.AddUint32(begun, 1) // opened, never ended
	ts.put(0, 2)
	r := ts.must(&ddswire.AddCx{Path: "DDS/IBM/Moretest/A", ASN: 300}, -1, spmierr.SiSuccess)
	for i := 1; i <= 3; i++ {
		wantNode(t, h, "DDS/IBM/Test/gadgets", "99.2.220.1", 1)
		wantNode(t, h, "DDS/IBM/Test/widgets", "99.2.220.2", 1)
		if n := lookup(h, "DDS/IBM/Moretest/A/solutions"); n == nil || n.Current().OK() {
			t.Fatalf("A/solutions %+v: no consistent read yet, want no value", n)
		}
		if st := s.Stats(); st.StaleReads != uint64(3*i) || st.Suppliers != 1 { // one per read
			t.Fatalf("stats %+v after %d rounds", st, i)
		}
	}
	// Not logged before it lasted staleWarn (a writer preempted inside a
	// batch fails a read now and then), once after.
	if strings.Contains(lg.String(), "stays open") {
		t.Fatalf("logged before staleWarn:\n%s", lg)
	}
	s.reg.staleWarn = 0 // nothing else reads it: refreshes run here
	for range 2 {
		wantNode(t, h, "DDS/IBM/Test/gadgets", "99.2.220.1", 1)
	}
	if n := strings.Count(lg.String(), "stays open"); n != 1 {
		t.Fatalf("logged %d times, want once:\n%s", n, lg)
	}
	for _, want := range []string{"SiShBatch=1", "SiShBatchEnd=0", "vendor=IBM"} {
		if !strings.Contains(lg.String(), want) {
			t.Fatalf("log lacks %q:\n%s", want, lg)
		}
	}

	atomic.AddUint32(header32(ts.mem, ddswire.OffBatchEnd), 1)
	ts.put(uint32(r.Value)+8, 5)
	wantNode(t, h, "DDS/IBM/Test/gadgets", "99.2.220.1", 2)
	wantNode(t, h, "DDS/IBM/Moretest/A/solutions", "99.2.221.300.2", 5)
}

// A file of format minor 0 (an older library) is read as before: its
// reserved words are not batch counters, and the daemon writes nothing
// into them.
func TestServerReadsMinorZeroAsBefore(t *testing.T) {
	s, h := testServer(t, nil)
	ts := newSupFile(t, ddswiretest.GuideInit())
	hd := ddswire.DecodeHeader(ts.mem)
	hd.Minor, hd.Batch = 0, 5 // a nonzero reserved word
	hd.Encode(ts.mem)
	ts.register(s, spmierr.SiSuccess)
	ts.put(0, 3)
	wantNode(t, h, "DDS/IBM/Test/gadgets", "99.2.220.1", 3)
	if r, _ := LoadReading(ts.mem); r != 0 {
		t.Fatalf("SiShReading %d in a minor-0 file", r)
	}
	if st := s.Stats(); st.StaleReads != 0 {
		t.Fatalf("stats %+v", st)
	}
}
