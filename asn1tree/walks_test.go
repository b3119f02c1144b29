package asn1tree

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// moment is a distinct, comparable moment handle.
type moment struct{ n int }

// row names the first n cells of column col of a table under 1.2.
func row(col, n int) []OID {
	var o []OID
	for i := 1; i <= n; i++ {
		o = append(o, OID{1, 2, uint32(col), uint32(i)})
	}
	return o
}

func TestWalksContinueFromWhereAResponseEnded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var w Walks[string]
		m1 := &moment{1}
		ends := row(3, 4)
		if s := w.Lookup("a", OID{1, 2}); s.At() != nil {
			t.Fatalf("a first request continues moment %v", s.At())
		}
		w.Record(Step{}, "a", m1, ends)
		for _, o := range ends {
			if got := w.Lookup("a", o); got.At() != m1 {
				t.Errorf("request from %s: moment %v, want the walk's", o, got.At())
			}
		}
		for _, c := range []struct {
			peer string
			o    OID
		}{{"a", OID{1, 2, 3, 5}}, {"a", OID{1, 2, 3}}, {"b", ends[3]}} {
			if got := w.Lookup(c.peer, c.o); got.At() != nil {
				t.Errorf("request of %s from %s continues %v; it starts a walk", c.peer, c.o, got.At())
			}
		}
		// The next response of the same walk moves its end; the one
		// before still counts (a retry), the one before that does not.
		s := w.Record(w.Lookup("a", ends[3]), "a", m1, row(4, 2))
		w.Record(s, "a", m1, row(5, 2))
		if got := w.Lookup("a", row(4, 2)[1]); got.At() != m1 {
			t.Errorf("a retry of the previous request starts a walk")
		}
		if got := w.Lookup("a", ends[3]); got.At() != nil {
			t.Errorf("a request from two responses back continues the walk")
		}
		if n := w.Len(); n != 1 {
			t.Errorf("%d walks remembered, want 1", n)
		}

		// Long OIDs (hashed in pieces) continue as short ones do, and
		// only where they ended.
		long := make(OID, 100)
		for i := range long {
			long[i] = uint32(i)
		}
		other := long.Append(7)
		w.Record(Step{}, "d", m1, []OID{long})
		if w.Lookup("d", long.Clone()).At() != m1 || w.Lookup("d", other).At() != nil || w.Lookup("d", long[:99]).At() != nil {
			t.Error("a long OID is not told from its neighbours")
		}
		// A source without moments records nothing.
		w.Record(Step{}, "c", nil, ends)
		if got := w.Lookup("c", ends[0]); got.At() != nil || w.Len() != 2 {
			t.Errorf("a response without a moment was remembered")
		}
	})
}

func TestWalksGap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var w Walks[int]
		w.Gap = 2 * time.Second
		m := &moment{1}
		end := OID{1, 5}
		w.Record(Step{}, 1, m, []OID{end})
		time.Sleep(w.Gap) // just within the gap
		s := w.Lookup(1, end)
		if s.At() != m {
			t.Fatalf("a request %v after the response starts a walk; Gap is %v", w.Gap, w.Gap)
		}
		w.Record(s, 1, m, []OID{end})
		time.Sleep(w.Gap + time.Nanosecond)
		if s := w.Lookup(1, end); s.At() != nil {
			t.Fatalf("a request %v after the response continues the walk", w.Gap+time.Nanosecond)
		}
	})
}

func TestWalksHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var w Walks[int]
		w.Gap, w.Hold = 4*time.Second, 10*time.Second
		m := &moment{1}
		end := OID{1, 5}
		w.Record(Step{}, 1, m, []OID{end})
		start := time.Now()
		for {
			time.Sleep(3 * time.Second)
			got := w.Lookup(1, end)
			age := time.Since(start)
			if age <= w.Hold {
				if got.At() != m {
					t.Fatalf("at %v of a walk held %v: moment %v", age, w.Hold, got.At())
				}
				w.Record(got, 1, m, []OID{end})
				continue
			}
			if got.At() != nil {
				t.Fatalf("at %v of a walk held %v it keeps its moment", age, w.Hold)
			}
			// It goes on from a fresh moment.
			m2 := &moment{2}
			w.Record(got, 1, m2, []OID{end})
			if got := w.Lookup(1, end); got.At() != m2 {
				t.Fatalf("after the hold the walk goes on from %v, want the fresh moment", got.At())
			}
			break
		}
	})
}

// The least recently answered walk makes room; the number of walks and
// what each keeps stay bounded whatever the responses.
func TestWalksBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := Walks[int]{Max: 3}
		ends := func(i int) []OID { return []OID{{1, uint32(i)}} }
		steps := map[int]Step{}
		for i := 1; i <= 3; i++ {
			steps[i] = w.Record(Step{}, i, &moment{i}, ends(i))
			time.Sleep(time.Millisecond)
		}
		w.Record(w.Lookup(1, ends(1)[0]), 1, &moment{1}, ends(1)) // 1 answered last
		time.Sleep(time.Millisecond)
		w.Record(Step{}, 4, &moment{4}, ends(4)) // takes 2's place
		for i, want := range map[int]bool{1: true, 2: false, 3: true, 4: true} {
			if got := w.Lookup(i, ends(i)[0]).At() != nil; got != want {
				t.Errorf("walk %d remembered: %v, want %v", i, got, want)
			}
		}
		// A stale step (its slot now 4's) starts a walk, which takes the
		// place of the least recently answered (3), and leaves 4 alone.
		w.Record(steps[2], 2, &moment{2}, ends(2))
		for i, want := range map[int]bool{1: true, 2: true, 3: false, 4: true} {
			if got := w.Lookup(i, ends(i)[0]).At() != nil; got != want {
				t.Errorf("after a stale step: walk %d remembered: %v, want %v", i, got, want)
			}
		}

		// Only the last MaxWalkEnds names of a response count.
		big := row(1, 1000)
		w.Record(Step{}, 9, &moment{9}, big)
		if w.Lookup(9, big[len(big)-MaxWalkEnds]).At() == nil {
			t.Errorf("the %dth name from the end does not continue", MaxWalkEnds)
		}
		if w.Lookup(9, big[len(big)-MaxWalkEnds-1]).At() != nil {
			t.Errorf("the %dth name from the end continues", MaxWalkEnds+1)
		}
		for i := range 1000 {
			w.Record(w.Lookup(i%7, big[999]), i%7, &moment{i}, big)
		}
		if len(w.walks) > w.Max {
			t.Errorf("%d walks kept, Max %d", len(w.walks), w.Max)
		}
		for i := range w.walks {
			if e := &w.walks[i]; cap(e.ends) > MaxWalkEnds || cap(e.prev) > MaxWalkEnds {
				t.Errorf("walk %d keeps %d and %d hashes, at most %d each", i, cap(e.ends), cap(e.prev), MaxWalkEnds)
			}
		}
		// Once grown, following walks allocates nothing.
		m3, other := &moment{3}, OID{9}
		if n := testing.AllocsPerRun(100, func() {
			w.Record(w.Lookup(3, big[999]), 3, m3, big)
			w.Record(w.Lookup(5, other), 5, m3, big[:10])
		}); n != 0 {
			t.Errorf("%v allocations per request", n)
		}
	})
}

// Of several walks of one peer ending at the same OID (managers behind
// one master walking in step), the one answered last goes on.
func TestWalksLatestOfTwoWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var w Walks[int]
		end := []OID{{1, 7}}
		w.Record(Step{}, 1, &moment{1}, end)
		time.Sleep(time.Second)
		m2 := &moment{2}
		w.Record(Step{}, 1, m2, end)
		if got := w.Lookup(1, end[0]).At(); got != m2 {
			t.Errorf("continued %v, want the walk answered last", got)
		}
	})
}

// An idle front end keeps no moment beyond twice the gap: walks are
// forgotten without any request coming.
func TestWalksForgetIdleMoments(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var w Walks[int]
		for i := range 10 {
			w.Record(Step{}, i, &moment{i}, []OID{{1, uint32(i)}})
		}
		time.Sleep(DefaultWalkGap)
		if n := w.Len(); n != 10 {
			t.Fatalf("%d walks after %v, want 10", n, DefaultWalkGap)
		}
		time.Sleep(DefaultWalkGap)
		synctest.Wait() // the sweep due now has run
		b := w.lock()
		defer b.mu.Unlock()
		for i := range w.walks {
			if w.walks[i].at != nil {
				t.Errorf("walk %d keeps its moment %v after %v idle", i, w.walks[i].at, 2*DefaultWalkGap)
			}
		}
		if w.armed {
			t.Error("a sweep is still due with nothing to forget")
		}
	})
}

func TestLatestHasNoMoment(t *testing.T) {
	tr, _ := Build([]Entry[Value]{{OID: OID{1}, Val: Int(1)}})
	v, at := Latest(func() View { return tr })(nil)
	if v != View(tr) || at != nil {
		t.Errorf("Latest gave %v, %v", v, at)
	}
}

// datedView is a view that tells when its data was collected.
type datedView struct {
	View
	t time.Time
}

func (v datedView) DataTime() time.Time { return v.t }

func TestDataAges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var a DataAges
		t0 := time.Now()
		a.Record(datedView{t: t0.Add(-3 * time.Second)}, t0)
		a.Record(datedView{t: t0.Add(-time.Second)}, t0)
		a.Record(datedView{}, t0)                     // read nothing dated
		a.Record(emptyTree(), t0)                     // no DataTimer
		a.Record(datedView{t: t0.Add(time.Hour)}, t0) // a clock step: no negative age
		check := func(wantLast, wantMax time.Duration) {
			t.Helper()
			if last, largest := a.Get(time.Now()); last != wantLast || largest != wantMax {
				t.Errorf("at %v: last %v largest %v, want %v %v", time.Since(t0), last, largest, wantLast, wantMax)
			}
		}
		check(0, 3*time.Second)
		time.Sleep(40 * time.Second)
		a.Record(datedView{t: time.Now().Add(-time.Second)}, time.Now())
		check(time.Second, 3*time.Second) // the 3 s of 40 s ago still count
		time.Sleep(25 * time.Second)
		check(time.Second, time.Second) // 65 s ago: forgotten
		time.Sleep(2 * time.Minute)
		check(time.Second, 0)
	})
}

func emptyTree() View {
	tr, _ := Build[Value](nil)
	return tr
}

func ExampleWalks() {
	var w Walks[string]
	snap := &moment{1}
	// The first request of a walk: no walk goes on, answer from now.
	s := w.Lookup("192.0.2.1:5000", OID{1, 3, 6})
	fmt.Println(s.At() == nil)
	// Its response ended at 1.3.6.1.2; the next request asks from there.
	w.Record(s, "192.0.2.1:5000", snap, []OID{{1, 3, 6, 1, 2}})
	fmt.Println(w.Lookup("192.0.2.1:5000", OID{1, 3, 6, 1, 2}).At() == snap)
	// Output:
	// true
	// true
}

// A walk's step with a full table of walks and a response of
// MaxWalkEnds names, as a 128-column row ends.
func BenchmarkWalksStep(b *testing.B) {
	var w Walks[int]
	names := make([]OID, MaxWalkEnds)
	for i := range names {
		names[i] = OID{1, 3, 6, 1, 4, 1, 32473, 1, 10, 100, 1, uint32(i + 2), 4242}
	}
	m := &moment{1}
	for i := range DefaultWalkMax {
		w.Record(Step{}, i, m, names)
	}
	b.ReportAllocs()
	for b.Loop() {
		w.Record(w.Lookup(7, names[0]), 7, m, names)
	}
}
