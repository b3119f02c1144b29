//go:build linux

// The Go supplier library (client/ddsclient) against the real server:
// values a writer sets in one Update are served whole, across daemon
// restarts too.

package dds_test

import (
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/ddsclient"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/dds/ddstest"
)

// batchSupplier has v1, v2 in DDS/IBM/Test, v3, v4 in DDS/IBM/Other and
// an instance DDS/IBM/sda of a template with one counter, n: five values
// that its writer increments together.
type batchSupplier struct {
	s    *ddsclient.Supplier
	vals [5]*ddsclient.Counter
}

var batchPaths = []string{"DDS/IBM/Test/v1", "DDS/IBM/Test/v2", "DDS/IBM/Other/v3", "DDS/IBM/Other/v4", "DDS/IBM/sda/n"}

func newBatchSupplier(t *testing.T, sock string) *batchSupplier {
	t.Helper()
	v := ddsclient.NewVendor("IBM", "IBM-defined Dynamic Data-Suppliers", 2)
	test, other := v.Context("Test", "Test", 220), v.Context("Other", "Other", 221)
	b := &batchSupplier{}
	b.vals[0] = test.Counter("v1", "v1", 1)
	b.vals[1] = test.Counter("v2", "v2", 2)
	b.vals[2] = other.Counter("v3", "v3", 1)
	b.vals[3] = other.Counter("v4", "v4", 2)
	disk := v.Template("Disk", "Disk")
	n := disk.Counter("n", "n", 1)
	s, err := ddsclient.Start(v, filepath.Join(t.TempDir(), "batch.dds"), &ddsclient.Options{Socket: sock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Exit() })
	in, err := s.AddCx(disk, "DDS/IBM/sda", "sda", 10)
	if err != nil {
		t.Fatal(err)
	}
	b.s, b.vals[4] = s, in.Counter(n)
	return b
}

// run increments all five inside Update until stop is closed; it returns
// the number of batches.
func (b *batchSupplier) run(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		var n uint64
		for {
			select {
			case <-stop:
				out <- n
				return
			default:
			}
			b.s.Update(func() {
				for _, c := range b.vals {
					c.Inc()
				}
			})
			n++
		}
	}()
	return out
}

// all is what a supplier that ran n batches serves.
func all(n uint64) []uint64 { return []uint64{n, n, n, n, n} }

// Values that a writer sets together in Update, in three contexts (one a
// volatile instance), are always served together: every snapshot taken
// while the writer runs flat out shows five equal values, and they move.
func TestUpdateIsServedWhole(t *testing.T) {
	d := ddstest.Start(t, "", ddswire.Limits{})
	b := newBatchSupplier(t, d.Socket())
	stop := make(chan struct{})
	count := b.run(stop)
	// A context has no value until its first consistent read, which a
	// writer preempted inside a batch can put off a little.
	testutil.Eventually(t, "values served", 5*time.Second, func() bool {
		_, ok := d.ReadAll(batchPaths)
		return ok
	})
	distinct := map[uint64]bool{}
	for end := time.Now().Add(time.Second); time.Now().Before(end) || len(distinct) < 20; {
		v, ok := d.ReadAll(batchPaths)
		if !ok {
			close(stop)
			t.Fatal("the supplier's values are not served")
		}
		if !ddstest.Whole(v) {
			close(stop)
			t.Fatalf("one snapshot served %v: a batch read in part", v)
		}
		distinct[v[0]] = true
	}
	close(stop)
	n := <-count
	if v, _ := d.ReadAll(batchPaths); !slices.Equal(v, all(n)) {
		t.Fatalf("after %d batches the daemon serves %v", n, v)
	}
	t.Logf("%d batches, %d distinct values served, %d stale reads", n, len(distinct), d.S.Stats().StaleReads)
}

// Daemon restarts while the writer runs flat out: the library replays
// the instance at its slot, and each new daemon publishes it with its
// values. A reader polling all along never sees a zero, a value going
// back or a batch in part, and in the end no increment is lost.
func TestReplayNeverShowsZeros(t *testing.T) {
	const restarts = 5
	run := t.TempDir()
	var cur atomic.Pointer[ddstest.Daemon]
	cur.Store(ddstest.Start(t, run, ddswire.Limits{}))
	b := newBatchSupplier(t, cur.Load().Socket())
	stop := make(chan struct{})
	count := b.run(stop)
	testutil.Eventually(t, "values counting", 5*time.Second, func() bool {
		v, ok := cur.Load().ReadAll(batchPaths)
		return ok && v[0] > 0
	})

	poll := ddstest.Poll(cur.Load, batchPaths)
	stopAll := func() {
		close(stop)
		poll.Stop()
	}
	for range restarts {
		poll.WaitServed(t, "polls served by the daemon", stopAll)
		cur.Load().Close()
		poll.Restarted()
		cur.Store(ddstest.Start(t, run, ddswire.Limits{}))
		testutil.Eventually(t, "re-registered", 5*time.Second, func() bool { return b.s.Check() == nil })
	}
	poll.WaitServed(t, "polls served by the last daemon", stopAll)
	close(stop)
	pollErr := poll.Stop()
	n := <-count
	if pollErr != nil {
		t.Fatal(pollErr)
	}
	if v, _ := cur.Load().ReadAll(batchPaths); !slices.Equal(v, all(n)) {
		t.Fatalf("after %d batches the last daemon serves %v: increments lost", n, v)
	}
	t.Logf("%d batches, %d restarts, %d polls", n, restarts, poll.Polls.Load())
}
