package control

import (
	"github.com/perfagent/subagent/client/consumer"
	"github.com/perfagent/subagent/client/spmiwire"
	"testing"
	"time"

	"github.com/perfagent/subagent/spmi"
)

// A runtime hotset belongs to the connection that made it: another
// connection cannot see it, and it is gone when its connection closes.
func TestHotsetsBelongToTheirSession(t *testing.T) {
	dir, _ := startServer(t)
	a, err := consumer.Dial(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := consumer.Dial(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := t.Context()
	id, err := a.HotsetCreate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.HotsetAdd(ctx, id, spmiwire.HotDef{Stat: "CPU/*/idle", Feed: "always"}); err != nil {
		t.Fatal(err)
	}
	a.HotsetGet(ctx, id, time.Time{})
	r, err := a.HotsetGet(ctx, id, time.Time{})
	if err != nil || len(r.PeerSets) != 1 || len(r.PeerSets[0].Groups) != 1 || len(r.PeerSets[0].Groups[0].Items) != 1 {
		t.Fatalf("CPU/*/idle over the one processor: %+v %v", r, err)
	}
	if _, err := b.HotsetGet(ctx, id, time.Time{}); spmi.CodeOf(err) != spmi.SiInvalidCx {
		t.Errorf("another connection read hotset %d: %v, want SiInvalidCx", id, err)
	}
	for range MaxSessionHotsets - 1 {
		if _, err := a.HotsetCreate(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.HotsetCreate(ctx); spmi.CodeOf(err) != spmi.SiCallocFailed {
		t.Errorf("hotset beyond the session's bound: %v, want SiCallocFailed", err)
	}
	a.Close()
}
