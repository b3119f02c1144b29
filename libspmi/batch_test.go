//go:build linux

package libspmi

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/dds/ddstest"
)

// The guide table's four permanent values (struct dat at area offsets 0,
// 8, 16 and 24), which the driver's spin command increments together.
var guidePaths = []string{"DDS/IBM/Test/gadgets", "DDS/IBM/Test/widgets",
	"DDS/IBM/Moretest/SubTest/level", "DDS/IBM/Moretest/SubTest/queue"}

// stopSpin ends the driver's writer thread and returns its batch count.
func stopSpin(s *sup) uint64 {
	s.t.Helper()
	n, err := strconv.ParseUint(s.ok("stop")[0], 10, 64)
	if err != nil {
		s.t.Fatal(err)
	}
	return n
}

// Values a C supplier writes between SpmiDdsBegin and SpmiDdsEnd, from a
// thread running batches back to back, are served together: every
// snapshot shows four equal values, and they move.
func TestBatchesServedWhole(t *testing.T) {
	bothLibs(t, func(t *testing.T, static bool) {
		d := startDaemon(t, "")
		s := startSup(t, static, d.RunDir)
		if f := s.ok("batch"); f[0] != "-" { // before SpmiDdsInit: nothing to count
			t.Fatalf("batch before init: %v", f)
		}
		s.ok("init %s 4096 guide", s.file)
		if f := s.ok("batch"); fmt.Sprint(f) != "[1 1 1]" {
			t.Fatalf("SiShBatch, SiShBatchEnd, SiShMinor after one batch: %v", f)
		}
		s.ok("spin 0 8 16 24")
		// A context has no value until its first consistent read, which a
		// writer thread preempted inside a batch can put off a little.
		testutil.Eventually(t, "values served", 5*time.Second, func() bool {
			_, ok := d.ReadAll(guidePaths)
			return ok
		})
		distinct := map[uint64]bool{}
		for end := time.Now().Add(time.Second); time.Now().Before(end) || len(distinct) < 20; {
			v, ok := d.ReadAll(guidePaths)
			if !ok {
				t.Fatal("the supplier's values are not served")
			}
			if !ddstest.Whole(v) {
				stopSpin(s)
				t.Fatalf("one snapshot served %v: a batch read in part", v)
			}
			distinct[v[0]] = true
		}
		n := stopSpin(s)
		if v, _ := d.ReadAll(guidePaths); !ddstest.Whole(v) || v[0] != n {
			t.Fatalf("after %d batches the daemon serves %v", n, v)
		}
		if f, want := s.ok("batch"), fmt.Sprint([]uint64{n + 2, n + 2, 1}); fmt.Sprint(f) != want {
			t.Fatalf("counters after %d more batches: %v, want %s", n+1, f, want)
		}
		t.Logf("%d batches, %d distinct values served, %d stale reads", n, len(distinct), d.S.Stats().StaleReads)
	})
}

// SpmiDdsBegin and SpmiDdsEnd pair up per thread, nested or not; a stray
// SpmiDdsEnd changes nothing. While a batch is open the daemon serves the
// values of its last consistent read, and the batch's values once it ends.
func TestBatchBeginEnd(t *testing.T) {
	d := startDaemon(t, "")
	s := startSup(t, false, d.RunDir)
	s.ok("init %s 4096 guide", s.file)
	s.ok("put 0 5")
	d.want(t, "DDS/IBM/Test/gadgets", "99.2.220.1", 5)
	for _, step := range []struct{ cmd, want string }{
		{"end", "[0 0 1]"}, // stray: ignored
		{"begin", "[1 0 1]"},
		{"begin", "[2 0 1]"}, // nested
		{"end", "[2 1 1]"},
	} {
		if f := s.ok("%s", step.cmd); fmt.Sprint(f) != step.want {
			t.Fatalf("%s: SiShBatch, SiShBatchEnd, SiShMinor %v, want %s", step.cmd, f, step.want)
		}
	}
	s.ok("put 0 6")
	s.ok("put 8 6")
	d.want(t, "DDS/IBM/Test/gadgets", "99.2.220.1", 5) // the batch is still open
	d.want(t, "DDS/IBM/Test/widgets", "99.2.220.2", 0)
	if f := s.ok("end"); fmt.Sprint(f) != "[2 2 1]" {
		t.Fatalf("last end: %v", f)
	}
	d.want(t, "DDS/IBM/Test/gadgets", "99.2.220.1", 6)
	d.want(t, "DDS/IBM/Test/widgets", "99.2.220.2", 6)
	if st := d.S.Stats(); st.StaleReads != 2 {
		t.Fatalf("stale reads %d, want the 2 while the batch was open", st.StaleReads)
	}
}

// Daemon restarts while a thread writes flat out: SpmiDdsCheck replays
// the volatile context at its slot and each new daemon publishes it with
// its values. A reader polling all along never sees a zero, a value going
// back or a batch in part, and in the end no increment is lost (the
// library no longer saves and writes back the slot around the replay).
func TestReplayNeverShowsZeros(t *testing.T) {
	bothLibs(t, func(t *testing.T, static bool) {
		const restarts = 3
		run := t.TempDir()
		var cur atomic.Pointer[daemon]
		cur.Store(startDaemon(t, run))
		s := startSup(t, static, run)
		s.ok("init %s 4096 guide", s.file)
		b := s.offset("add 0 1 DDS/IBM/Moretest/B dyn")
		paths := append(guidePaths[:4:4], "DDS/IBM/Moretest/B/solutions")
		s.ok("spin 0 8 16 24 %d", b+8)
		testutil.Eventually(t, "values counting", 5*time.Second, func() bool {
			v, ok := cur.Load().ReadAll(paths)
			return ok && v[0] > 0
		})

		poll := ddstest.Poll(func() *ddstest.Daemon { return cur.Load().Daemon }, paths)
		stopAll := func() {
			poll.Stop()
			stopSpin(s)
		}
		for range restarts {
			poll.WaitServed(t, "polls served by the daemon", stopAll)
			cur.Load().Close()
			poll.Restarted()
			cur.Store(startDaemon(t, run))
			s.ok("check")
		}
		poll.WaitServed(t, "polls served by the last daemon", stopAll)
		pollErr := poll.Stop()
		n := stopSpin(s)
		if pollErr != nil {
			t.Fatal(pollErr)
		}
		if v, _ := cur.Load().ReadAll(paths); !ddstest.Whole(v) || v[0] != n {
			t.Fatalf("after %d batches the last daemon serves %v: increments lost", n, v)
		}
		t.Logf("%d batches, %d restarts", n, restarts)
	})
}
