package control_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/consumer"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/control"
)

// A runtime statset of 20,000 statistics reads in one small request, all
// values from one snapshot, in the order added; the per-user budget
// bounds the statsets and the bytes their paths take.
func TestStatSetOfTwentyThousand(t *testing.T) {
	const n = 20_000
	dir, p, _ := budgeted(t, n, control.Budget{StatSets: 2, Bytes: 4 << 20}, false)
	ctx := t.Context()
	c := connect(t, consumer.Dial, dir)
	id, err := c.StatSetCreate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var batch []string
	for i := range n {
		batch = append(batch, fmt.Sprintf("Many/p%d/v", i))
		if len(batch) == 500 || i == n-1 { // a request stays under spmiwire.MaxRequest
			if _, err := c.StatSetAdd(ctx, id, batch, false); err != nil {
				t.Fatalf("add up to %d: %v", i, err)
			}
			batch = nil
		}
	}
	s1, err := c.StatSetGet(ctx, id, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s1.Items) != n {
		t.Fatalf("%d values, want %d", len(s1.Items), n)
	}
	for i, it := range s1.Items {
		if it.Err != nil || it.Value.Uint64() != uint64(i%100) {
			t.Fatalf("value %d: %+v, want %d", i, it, i%100)
		}
	}
	p.n.Store(n - 1) // the last one goes: its value is missing, the others stay
	s2, err := c.StatSetGet(ctx, id, s1.Time)
	if err != nil || len(s2.Items) != n || !s2.Time.After(s1.Time) {
		t.Fatalf("second read: %d values at %v (first %v): %v", len(s2.Items), s2.Time, s1.Time, err)
	}
	if e := s2.Items[n-1].Err; e == nil || e.Code != spmierr.SiNotFound {
		t.Errorf("the departed statistic: %+v, want SiNotFound", s2.Items[n-1])
	}

	// Bad paths: none of the batch is added.
	_, err = c.StatSetAdd(ctx, id, []string{"Many/p1/v", "Many/nope/v"}, false)
	if spmierr.CodeOf(err) != spmierr.SiNotFound || !strings.Contains(err.Error(), "Many/nope") {
		t.Errorf("add with a bad path: %v, want SiNotFound naming it", err)
	}
	if got, _ := c.StatSetAdd(ctx, id, []string{"Many/p1/v"}, false); got != n+1 {
		t.Errorf("statset holds %d after a refused batch and one add, want %d", got, n+1)
	}

	// The budget: statsets per user, and bytes.
	if _, err := c.StatSetCreate(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = c.StatSetCreate(ctx)
	refusedFor(t, "third statset of the user", err, "control.max_statsets_per_uid")
	id3 := 0
	for err = nil; err == nil; {
		_, err = c.StatSetAdd(ctx, id, batchOf(1000), false)
	}
	refusedFor(t, "statsets over 4 MiB of paths", err, "control.max_hotset_bytes_per_uid")
	if err := c.StatSetFree(ctx, id); err != nil {
		t.Fatal(err)
	}
	if id3, err = c.StatSetCreate(ctx); err != nil || id3 == 0 {
		t.Errorf("create after a free: %d %v", id3, err)
	}
	if _, err := c.StatSetGet(ctx, id, time.Time{}); spmierr.CodeOf(err) != spmierr.SiInvalidCx {
		t.Errorf("read of a freed statset: %v, want SiInvalidCx", err)
	}
}

func batchOf(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("Many/p%d/v", i)
	}
	return out
}

// The Go consumer's statset of 20,000 statistics lives in the daemon:
// every value in the order added, paths and descriptions filled in here;
// after a Del and an Add the daemon's set is made anew (the old one
// freed: the budget of two sets holds), and a bad path among 20,000 is
// refused naming it.
func TestGoStatSetOfTwentyThousand(t *testing.T) {
	const n = 20_000
	dir, _, _ := budgeted(t, n, control.Budget{StatSets: 2, Bytes: 4 << 20}, false)
	ctx := t.Context()
	c := connect(t, consumer.Open, dir)
	paths := make([]string, n)
	for i := range paths {
		paths[i] = fmt.Sprintf("Many/p%d/v", i)
	}
	bad := append(slices.Clone(paths), "Many/nope/v")
	if _, err := c.NewStatSet(ctx, bad...); spmierr.CodeOf(err) != spmierr.SiNotFound || !strings.Contains(err.Error(), "Many/nope") {
		t.Fatalf("a bad path among %d: %v, want SiNotFound naming it", n, err)
	}
	ss, err := c.NewStatSet(ctx, paths...)
	if err != nil {
		t.Fatal(err)
	}
	r1, err := ss.Read(ctx)
	if err != nil || len(r1.Values) != n {
		t.Fatalf("first read: %d values: %v", len(r1.Values), err)
	}
	for i, v := range r1.Values {
		if v.Path != paths[i] || v.Stat == nil || v.Stat.Name != "v" || v.Value.Uint64() != uint64(i%100) {
			t.Fatalf("value %d: %+v, want %s = %d", i, v, paths[i], i%100)
		}
	}
	for round := range 3 {
		if err := ss.Del(paths[round]); err != nil {
			t.Fatal(err)
		}
		if err := ss.Add(ctx, paths[round]); err != nil {
			t.Fatal(err)
		}
		r2, err := ss.Read(ctx)
		if err != nil || len(r2.Values) != n || !r2.Time.After(r1.Time) {
			t.Fatalf("round %d: %d values at %v (before %v): %v", round, len(r2.Values), r2.Time, r1.Time, err)
		}
		first, last := r2.Values[0], r2.Values[n-1]
		if first.Path != paths[round+1] || first.Value.Uint64() != uint64(round+1) || last.Path != paths[round] || last.Value.Uint64() != uint64(round) {
			t.Fatalf("round %d: first %s = %v, last %s = %v", round, first.Path, first.Value, last.Path, last.Value)
		}
		r1 = r2
	}
}
