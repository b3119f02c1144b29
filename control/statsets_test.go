package control

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/spmi"
)

// A runtime statset of 20,000 statistics reads in one small request, all
// values from one snapshot, in the order added; the per-user budget
// bounds the statsets and the bytes their paths take.
func TestStatSetOfTwentyThousand(t *testing.T) {
	const n = 20_000
	dir, p, _ := budgeted(t, n, Budget{StatSets: 2, Bytes: 4 << 20}, false)
	ctx := t.Context()
	c := dial(t, dir)
	id, err := c.StatSetCreate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var batch []string
	for i := range n {
		batch = append(batch, fmt.Sprintf("Many/p%d/v", i))
		if len(batch) == 500 || i == n-1 { // a request stays under MaxRequest
			if _, err := c.StatSetAdd(ctx, id, batch); err != nil {
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
	if e := s2.Items[n-1].Err; e == nil || e.Code != spmi.SiNotFound {
		t.Errorf("the departed statistic: %+v, want SiNotFound", s2.Items[n-1])
	}

	// Bad paths: none of the batch is added.
	_, err = c.StatSetAdd(ctx, id, []string{"Many/p1/v", "Many/nope/v"})
	if spmi.CodeOf(err) != spmi.SiNotFound || !strings.Contains(err.Error(), "Many/nope") {
		t.Errorf("add with a bad path: %v, want SiNotFound naming it", err)
	}
	if got, _ := c.StatSetAdd(ctx, id, []string{"Many/p1/v"}); got != n+1 {
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
		_, err = c.StatSetAdd(ctx, id, batchOf(1000))
	}
	refusedFor(t, "statsets over 4 MiB of paths", err, "control.max_hotset_bytes_per_uid")
	if err := c.StatSetFree(ctx, id); err != nil {
		t.Fatal(err)
	}
	if id3, err = c.StatSetCreate(ctx); err != nil || id3 == 0 {
		t.Errorf("create after a free: %d %v", id3, err)
	}
	if _, err := c.StatSetGet(ctx, id, time.Time{}); spmi.CodeOf(err) != spmi.SiInvalidCx {
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
