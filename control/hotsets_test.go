package control_test

import (
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/consumer"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/control"
)

// A runtime hotset belongs to the connection that made it: another
// connection cannot see it, and it is gone when its connection closes.
func TestHotsetsBelongToTheirSession(t *testing.T) {
	dir := serveCPU(t, 0)
	a, err := consumer.Dial(dir)
	if err != nil {
		t.Fatal(err)
	}
	b := connect(t, consumer.Dial, dir)
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
	if _, err := b.HotsetGet(ctx, id, time.Time{}); spmierr.CodeOf(err) != spmierr.SiInvalidCx {
		t.Errorf("another connection read hotset %d: %v, want SiInvalidCx", id, err)
	}
	for range control.MaxSessionHotsets - 1 {
		if _, err := a.HotsetCreate(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.HotsetCreate(ctx); spmierr.CodeOf(err) != spmierr.SiCallocFailed {
		t.Errorf("hotset beyond the session's bound: %v, want SiCallocFailed", err)
	}
	a.Close()
}

// A runtime hotset takes a falling threshold, checked as the
// configuration's is.
func TestHotsetRearmValidated(t *testing.T) {
	a := connect(t, consumer.Dial, serveCPU(t, 0))
	ctx := t.Context()
	id, err := a.HotsetCreate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := spmiwire.HotDef{Stat: "CPU/*/idle", MaxResp: 1, Threshold: 50, Frequency: 5, Excp: "exception", Severity: 1, Rearm: 60}
	if _, err := a.HotsetAdd(ctx, id, d); spmierr.CodeOf(err) != spmierr.SiBadArgument || !strings.Contains(err.Error(), "rearm: 60 is not from 1 to the threshold 50") {
		t.Errorf("rearm above the threshold: %v, want SiBadArgument naming rearm", err)
	}
	d.Rearm, d.Cleared = 40, true
	if _, err := a.HotsetAdd(ctx, id, d); err != nil {
		t.Errorf("rearm 40 with cleared: %v", err)
	}
}
