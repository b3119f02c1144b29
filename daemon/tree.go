package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/directory"
	"github.com/perfagent/subagent/internal/foldlog"
	"github.com/perfagent/subagent/mib/schema"
	"github.com/perfagent/subagent/traps"
)

// treeNotes sends the tree changed notification (schema.TreeChanged) when
// the directory's generation changes: at most once per interval, covering
// every generation since the one before (treeFirstGeneration to
// treeGeneration) with the count of paths changed in them and as many of
// them as 255 octets hold, oldest first (a supplier that registered and
// left in between is named twice); the directory's change table has them
// all. It goes through hotsets.send, on every path and into the log. An
// interval of 0 sends none (a reload may change it).
type treeNotes struct {
	interval atomic.Int64 // time.Duration
	wake     chan struct{}
	watch    func(context.Context) // the directory's looks (Directory.Watch), run with run; nil: none

	mu          sync.Mutex
	first, last uint32 // the generations pending
	count       uint32 // paths changed in them
	list        strings.Builder
	cut         bool // list is full: later paths are counted only
	pending     bool
}

// maxList is what a DisplayString holds.
const maxList = 255

func newTreeNotes(interval time.Duration) *treeNotes {
	t := &treeNotes{wake: make(chan struct{}, 1)}
	t.interval.Store(int64(interval))
	return t
}

// changed records a new generation (directory.New's onChange, told in
// order: it must not block).
func (t *treeNotes) changed(c directory.Change) {
	t.mu.Lock()
	if !t.pending {
		t.first, t.pending = c.Generation, true
	}
	t.last = c.Generation
	note := func(p string, sign byte) {
		t.count++
		if t.cut {
			return
		}
		n := len(p) + 1
		if t.list.Len() > 0 {
			n++
		}
		if t.list.Len()+n > maxList-4 { // room for " ..."
			t.cut = true
			return
		}
		if t.list.Len() > 0 {
			t.list.WriteByte(' ')
		}
		t.list.WriteByte(sign)
		t.list.WriteString(p)
	}
	for _, p := range c.Removed {
		note(p, '-')
	}
	for _, p := range c.Added {
		note(p, '+')
	}
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// pendingNote is what one notification carries.
type pendingNote struct {
	first, last, count uint32
	list               string
}

// take returns what is pending, and clears it.
func (t *treeNotes) take() (pendingNote, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.pending {
		return pendingNote{}, false
	}
	n := pendingNote{first: t.first, last: t.last, count: t.count, list: t.list.String()}
	if t.cut {
		if n.list != "" {
			n.list += " "
		}
		n.list += "..."
	}
	t.pending, t.count, t.cut = false, 0, false
	t.list.Reset()
	return n, true
}

// initDirectory adds the directory (Directory), whose generation goes on
// from the state directory's file, and its tree changed notifications.
func (d *Daemon) initDirectory(hs *hotsets) error {
	hs.tree = newTreeNotes(d.cfg.Hotset.TreeChangedInterval)
	d.dir = directory.New(d.h.Current, hs.tree.changed)
	log := d.log.With("part", "directory")
	// Folded by the error's kind: a full disk logs a line a minute.
	failed := foldlog.New(log, slog.LevelWarn)
	notSaved := func(err error) {
		failed.Note(foldlog.Source{}, "tree generation not saved", foldlog.Kind(err), "err", foldlog.Text(err.Error()))
	}
	if err := d.dir.Keep(filepath.Join(d.cfg.StateDir, directory.StoreFile), notSaved); err != nil {
		return fmt.Errorf("tree generation: %w", err)
	}
	d.h.Add(d.dir.Provider())
	d.h.SetOnProviders(d.dir.Look) // a part added or removed at run time
	hs.tree.watch = func(ctx context.Context) {
		d.dir.Watch(ctx, func() { d.h.Invalidate(); d.h.Fresh() })
	}
	return nil
}

// run sends the pending notification when one is due, until ctx is done.
func (t *treeNotes) run(ctx context.Context, hs *hotsets) {
	if t.watch != nil {
		var wg sync.WaitGroup
		defer wg.Wait() // its last write of the generation's file ends before the daemon does
		wg.Go(func() { t.watch(ctx) })
	}
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
		p, ok := t.take()
		if !ok {
			continue
		}
		bs, err := schema.TreeChanged.Bind(hs.base, asn1tree.Gauge(p.last), asn1tree.Str(p.list), asn1tree.Gauge(p.first), asn1tree.Gauge(p.count))
		if err != nil {
			hs.log.Error("tree changed notification not built", "err", err)
			continue
		}
		n := traps.Notification{Enterprise: hs.base, Specific: int(schema.TreeChangedNo), Uptime: time.Since(hs.start)}
		for _, b := range bs {
			n.Vars = append(n.Vars, traps.VarBind{OID: b.OID, Value: b.Value})
		}
		hs.log.Info("tree changed", "generations", fmt.Sprintf("%d-%d", p.first, p.last), "changes", p.count, "contexts", p.list)
		hs.send(n)
		last = time.Now()
	}
}
