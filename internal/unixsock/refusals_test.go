package unixsock

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
)

// One user varying its reasons gets at most MaxRefusalLines a minute,
// and another user still gets its own line; long text is cut.
func TestRefusalLogBoundsEachUsersLines(t *testing.T) {
	lb := &testutil.Buffer{}
	r := NewRefusalLog(slog.New(slog.NewTextHandler(lb, nil)))
	now := time.Unix(1000, 0)
	r.fold.Now = func() time.Time { return now }
	long := strings.Repeat("p", 60<<10)
	for i := range 5000 {
		r.Note(Peer{UID: 7}, "control: change refused", fmt.Sprintf("reason %d", i), "path", LogText(long))
	}
	r.Note(Peer{UID: 8}, "control: change refused", "reason 1")
	out := lb.String()
	if n := strings.Count(out, "uid=7"); n != MaxRefusalLines {
		t.Errorf("5000 refusals of uid 7 for as many reasons logged %d times, want %d", n, MaxRefusalLines)
	}
	if n := strings.Count(out, "uid=8"); n != 1 {
		t.Errorf("uid 8 logged %d times after uid 7's flood, want once", n)
	}
	if len(out) > MaxRefusalLines*(MaxLogText+300) || !strings.Contains(out, "…(61240 more bytes)") {
		t.Errorf("%d bytes of log for %d lines:\n%.600s", len(out), MaxRefusalLines+1, out)
	}
	now = now.Add(refusalEvery)
	r.Note(Peer{UID: 7}, "control: change refused", "reason 4999")
	if !strings.Contains(lb.String(), "reason=\"reason 4999\" count=2") {
		t.Errorf("a minute later, a reason held back not logged with its count:\n%s", testutil.Tail(lb.String(), 2))
	}
}
