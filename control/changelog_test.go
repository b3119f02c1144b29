package control_test

import (
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/consumer"
	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/control"
	"github.com/perfagent/subagent/control/controltest"
)

// 5,000 failed changes of an admin, as fast as it can send them (the
// clock moves 1 ms each, 5 s in all), log a few lines per reason, and the
// lines' counts add up to every failure: the next line of a reason, a
// minute on, carries the count held back.
func TestFailedChangesLogFolded(t *testing.T) {
	dir, lb := runDir(t), &testutil.Buffer{}
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	p := &peers{}
	p.n.Store(1)
	srv := control.WithClock(&control.Server{H: controltest.Hierarchy(0, p), Log: slog.New(slog.NewTextHandler(lb, nil))}, clock)
	controltest.ServeServer(t, dir, srv) // the test's user owns the daemon: an admin
	c := connect(t, consumer.Dial, dir)
	ctx := t.Context()
	fail := func(i int) {
		var err error
		if i%2 == 0 {
			err = c.Create(ctx, fmt.Sprintf("Many/p0/new%d", i)) // under a provider's instance: refused
		} else {
			err = c.Delete(ctx, fmt.Sprintf("Nowhere%d", i))
		}
		if err == nil {
			t.Fatalf("change %d succeeded", i)
		}
	}
	const n = 5000
	for i := range n {
		fail(i)
		advance(time.Millisecond)
	}
	advance(time.Minute)
	fail(0)
	fail(1)
	out := lb.String()
	lines := strings.Count(out, "control: change failed")
	if lines == 0 || lines >= 100 {
		t.Fatalf("%d failed changes logged %d lines, want 1 to 99:\n%s", n+2, lines, testutil.Tail(out, 5))
	}
	total := 0
	for _, m := range regexp.MustCompile(`msg="control: change failed".* count=(\d+)`).FindAllStringSubmatch(out, -1) {
		k, _ := strconv.Atoi(m[1])
		total += k
	}
	if total != n+2 {
		t.Errorf("the lines count %d failures, want %d:\n%s", total, n+2, out)
	}
	t.Logf("%d failed changes: %d lines", n+2, lines)
}
