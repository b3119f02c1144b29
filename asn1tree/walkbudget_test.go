package asn1tree

import (
	"testing"
	"testing/synctest"
	"time"
)

// sized is a moment that tells its size; moments of one data share key.
type sized struct {
	key   int
	bytes int64
}

func (s *sized) Pinned() (any, int64) { return s.key, s.bytes }

// Past the budget the oldest walks fall back to the current moment,
// counted once each; one moment kept by several walks counts once; a
// walk's own moment stays even when it alone is over the budget; the
// walks that end free what they kept.
func TestWalksKeepMomentsWithinBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := Walks[string]{Budget: 100}
		m1, m2, m3 := &sized{1, 60}, &sized{2, 60}, &sized{3, 60}
		a := w.Record(Step{}, "a", m1, row(1, 1))
		time.Sleep(time.Second)
		w.Record(Step{}, "b", m2, row(2, 1))
		if got, fell := w.PinnedBytes(), w.FellBack(); got != 60 || fell != 1 {
			t.Fatalf("after b: %d bytes kept, %d fell back; want 60 (b's), 1 (a)", got, fell)
		}
		// a goes on, from the current moment: its step has none.
		s := w.Lookup("a", row(1, 1)[0])
		if s.serial != a.serial || s.At() != nil {
			t.Fatalf("a's next request: walk %d (want %d), moment %v (want the current one)", s.serial, a.serial, s.At())
		}
		// Answered from m3 (current), a keeps it; b, now the oldest other
		// walk, falls back.
		w.Record(s, "a", m3, row(1, 2))
		if got, fell := w.PinnedBytes(), w.FellBack(); got != 60 || fell != 2 {
			t.Errorf("after a's step: %d bytes, %d fell back; want 60, 2", got, fell)
		}
		if w.Lookup("b", row(2, 1)[0]).At() != nil || w.Lookup("a", row(1, 2)[1]).At() != m3 {
			t.Error("b should go on from the current moment, a from m3")
		}
		// Walks sharing a moment count it once; a walk over the budget
		// by itself keeps its moment.
		w.Record(Step{}, "c", m3, row(3, 1))
		w.Record(Step{}, "d", m3, row(4, 1))
		if got := w.PinnedBytes(); got != 60 {
			t.Errorf("three walks on m3: %d bytes, want 60", got)
		}
		big := &sized{4, 500}
		w.Record(Step{}, "e", big, row(5, 1))
		if got := w.Lookup("e", row(5, 1)[0]).At(); got != big {
			t.Errorf("the walk over the budget by itself lost its moment: %v", got)
		}
		if got := w.PinnedBytes(); got != 500 {
			t.Errorf("with e alone pinned: %d bytes, want 500", got)
		}
		// Expired walks free what they kept.
		time.Sleep(2 * DefaultWalkGap)
		synctest.Wait()
		if got, n := w.PinnedBytes(), w.Len(); got != 0 || n != 0 {
			t.Errorf("after the walks expired: %d bytes kept by %d walks", got, n)
		}
	})
}

// Moments that do not tell their size count nothing: no walk falls back.
func TestWalksUnsizedMomentsNeverFallBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := Walks[int]{Budget: 1}
		for i := range 50 {
			w.Record(Step{}, i, &moment{i}, row(1, 1))
		}
		if w.FellBack() != 0 || w.PinnedBytes() != 0 || w.Len() != 50 {
			t.Errorf("fell back %d, %d bytes, %d walks", w.FellBack(), w.PinnedBytes(), w.Len())
		}
	})
}

// Two front ends' walks (peers of different types) sharing one budget:
// a moment both keep counts once; past the budget the oldest walk of
// either falls back, counted by its own Walks; each front end's walk being
// answered keeps its moment.
func TestWalksShareOneBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewWalkBudget(100)
		resp := Walks[string]{Shared: b, Budget: 1 << 30} // Budget unused with Shared
		ax := Walks[int]{Shared: b}
		m1, m2, m3 := &sized{1, 60}, &sized{2, 60}, &sized{3, 30}
		resp.Record(Step{}, "mgr", m1, row(1, 1))
		time.Sleep(time.Second)
		ax.Record(Step{}, 7, m1, row(1, 1)) // the same moment through AgentX
		if got := b.PinnedBytes(); got != 60 || resp.PinnedBytes() != 60 || ax.PinnedBytes() != 60 {
			t.Fatalf("one moment kept by both front ends: %d bytes (responder says %d, AgentX %d), want 60 once",
				got, resp.PinnedBytes(), ax.PinnedBytes())
		}
		time.Sleep(time.Second)
		// AgentX's new walk takes the total to 120: the oldest walk of
		// either, the responder's, falls back; m1 is still kept by
		// AgentX's first walk (120 still), which falls back next.
		ax.Record(Step{}, 8, m2, row(2, 1))
		if got, rf, af := b.PinnedBytes(), resp.FellBack(), ax.FellBack(); got != 60 || rf != 1 || af != 1 {
			t.Fatalf("after AgentX's second walk: %d bytes, fell back responder %d AgentX %d; want 60 (m2), 1, 1", got, rf, af)
		}
		if resp.Lookup("mgr", row(1, 1)[0]).At() != nil || ax.Lookup(8, row(2, 1)[0]).At() != m2 {
			t.Error("the responder's walk should go on from the current moment, AgentX's new one from m2")
		}
		// Within the budget together (60 + 30), nothing more falls back.
		time.Sleep(time.Second)
		resp.Record(Step{}, "mgr2", m3, row(3, 1))
		if got, rf, af := b.PinnedBytes(), resp.FellBack(), ax.FellBack(); got != 90 || rf != 1 || af != 1 {
			t.Errorf("within the budget: %d bytes, fell back %d %d; want 90, 1, 1", got, rf, af)
		}
		// Separate budgets would have kept all three (each under 100).
		var alone Walks[string]
		alone.Budget = 100
		alone.Record(Step{}, "x", &sized{9, 60}, row(1, 1))
		if alone.FellBack() != 0 || b.PinnedBytes() != 90 {
			t.Error("a Walks without Shared counts in a budget of its own")
		}
	})
}
