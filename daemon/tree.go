package daemon

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/directory"
	"github.com/perfagent/subagent/mib"
	"github.com/perfagent/subagent/traps"
)

// treeNotes sends the tree changed notification (mib.TreeChanged) when
// the directory's generation changes: at most once per interval, with
// the contexts changed since the one before (a supplier registering and
// leaving within one interval cancel out), through hotsets.send so that
// it goes on every path and into the log. An interval of 0 sends none
// (a reload may change it).
type treeNotes struct {
	interval atomic.Int64 // time.Duration
	wake     chan struct{}

	mu      sync.Mutex
	gen     uint32
	changes map[string]bool // folded path: true appeared, false vanished
	pending bool
}

func newTreeNotes(interval time.Duration) *treeNotes {
	t := &treeNotes{wake: make(chan struct{}, 1), changes: map[string]bool{}}
	t.interval.Store(int64(interval))
	return t
}

// changed records a new generation (directory.New's onChange: it must
// not block).
func (t *treeNotes) changed(c directory.Change) {
	t.mu.Lock()
	t.gen, t.pending = c.Generation, true
	note := func(p string, added bool) {
		if was, ok := t.changes[p]; ok && was != added {
			delete(t.changes, p) // came and went since the last notification
			return
		}
		t.changes[p] = added
	}
	for _, p := range c.Added {
		note(p, true)
	}
	for _, p := range c.Removed {
		note(p, false)
	}
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// take returns the pending generation and its list, and clears them.
func (t *treeNotes) take() (uint32, string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.pending {
		return 0, "", false
	}
	paths := make([]string, 0, len(t.changes))
	for p := range t.changes {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	var sb strings.Builder
	for _, p := range paths {
		if sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		if t.changes[p] {
			sb.WriteByte('+')
		} else {
			sb.WriteByte('-')
		}
		sb.WriteString(p)
	}
	s := sb.String()
	if len(s) > 255 {
		s = s[:252] + "..."
	}
	t.pending, t.changes = false, map[string]bool{}
	return t.gen, s, true
}

// run sends the pending notification when one is due, until ctx is done.
func (t *treeNotes) run(ctx context.Context, hs *hotsets) {
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.wake:
		}
		iv := time.Duration(t.interval.Load())
		if iv == 0 {
			t.take() // none sent: the next one names what changed after it
			continue
		}
		if wait := iv - time.Since(last); !last.IsZero() && wait > 0 {
			timer := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				timer.Stop()
				return
			case <-timer.C:
			}
		}
		gen, list, ok := t.take()
		if !ok {
			continue
		}
		bs, err := mib.TreeChanged.Bind(hs.base, asn1tree.Gauge(gen), asn1tree.Str(list))
		if err != nil {
			hs.log.Error("tree changed notification not built", "err", err)
			continue
		}
		n := traps.Notification{Enterprise: hs.base, Specific: int(mib.TreeChangedNo), Uptime: time.Since(hs.start)}
		for _, b := range bs {
			n.Vars = append(n.Vars, traps.VarBind{OID: b.OID, Value: b.Value})
		}
		hs.log.Info("tree changed", "generation", gen, "contexts", list)
		hs.send(n)
		last = time.Now()
	}
}
