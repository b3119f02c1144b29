package spmi

import (
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/internal/foldlog"
)

// group is the providers of one top-level context, collected together
// into one part.
type group struct {
	name   string
	provs  []Provider     // guarded by Hierarchy.mu
	stable StableProvider // the group's one provider when it is stable
	// maxAge is the most the context's own age may be (Config.MaxAge): it
	// is collected apart from requests, in the background; 0: with the
	// requests. Its age is readCost times its reading's duration, within
	// [MinAge, maxAge] (age).
	maxAge time.Duration

	collectMu sync.Mutex // one collection of the group at a time

	// Guarded by Hierarchy.mu.
	part     *part         // the last one collected
	dirty    bool          // its providers changed since
	building chan struct{} // closed when the collection in flight apart ends; nil: none

	read     atomic.Int64 // unix nanoseconds of the last answer that read the part
	inflight atomic.Bool  // building is not nil, for answers to check without the lock
	took     atomic.Int64 // nanoseconds its last reading took
	h        *Hierarchy
}

// apart tells whether the group is collected apart from requests.
func (g *group) apart() bool { return g.maxAge > 0 && g.stable == nil }

// collectMode says which groups a collection reads.
type collectMode int

const (
	collectAll     collectMode = iota // every group, waiting for each
	collectDue                        // every group older than its age; stable ones apart
	collectRequest                    // the groups read with requests; the others apart
)

// collect reads the groups mode asks for and publishes a snapshot with
// them; the groups whose reading must not be waited for are read apart
// (collectApart) and published when done.
func (h *Hierarchy) collect(mode collectMode) *Snapshot {
	now := time.Now()
	// Cleared before reading: an Invalidate during it marks the result stale.
	invalid := h.stale.Swap(false)
	var todo, apart []*group
	h.mu.Lock()
	for _, g := range h.groups {
		switch {
		case g.part == nil:
			todo = append(todo, g)
		case g.stable != nil:
			if g.dirty || g.part.shape != g.stable.Shape() {
				if mode == collectAll {
					todo = append(todo, g)
				} else {
					apart = append(apart, g)
				}
			}
		case g.apart():
			if mode == collectAll || g.dirty {
				todo = append(todo, g)
			} else if mode == collectDue && now.Sub(g.part.time) >= g.age(h.cfg.MinAge) {
				apart = append(apart, g)
			}
		default:
			if mode == collectAll || g.dirty || invalid || now.Sub(g.part.time) >= h.cfg.MinAge {
				todo = append(todo, g)
			}
		}
	}
	h.mu.Unlock()
	// The groups read together share their sources' reads (Shared).
	memo := map[string]shared{}
	parts := make([]*part, len(todo))
	for i, g := range todo {
		parts[i] = h.collectGroup(g, now, memo)
	}
	if len(todo) > 0 {
		// After the groups: the Agent context, read among them, tells
		// the duration of the reading before this one.
		h.statsMu.Lock()
		h.stats.LastTook = time.Since(now)
		h.statsMu.Unlock()
	}
	for _, g := range apart {
		h.collectApart(g)
	}
	return h.publish(todo, parts, now)
}

// collectGroup reads g's providers into a new part taken at now, unless
// a collection that started at or after now installed one meanwhile; memo
// holds the reads shared with the groups read with it (nil: none).
func (h *Hierarchy) collectGroup(g *group, now time.Time, memo map[string]shared) *part {
	g.collectMu.Lock()
	defer g.collectMu.Unlock()
	h.mu.Lock()
	cur, provs := g.part, append([]Provider(nil), g.provs...)
	h.mu.Unlock()
	if cur != nil && !cur.time.Before(now) && (g.stable == nil || cur.shape == g.stable.Shape()) {
		return cur
	}
	var shape any
	if g.stable != nil {
		shape = g.stable.Shape()
	}
	b, durs := h.build(provs, now, memo)
	pt := b.finishPart(shape)
	pt.name, pt.g, pt.time = g.name, g, now
	var took time.Duration // the providers' reading, not the part's build nor a wait for collectMu
	for _, d := range durs {
		took += d
	}
	g.took.Store(int64(took))
	h.statsMu.Lock()
	if h.stats.ProviderDur == nil {
		h.stats.ProviderDur = map[string]time.Duration{}
	}
	for k, d := range durs {
		h.stats.ProviderDur[k] = d
	}
	h.statsMu.Unlock()
	return pt
}

// build collects provs into a new builder. A provider that panics is
// disabled (Disabled) and the group read again without it, so that what
// it added before it panicked is not served; a disabled provider is a
// failing source from then on.
func (h *Hierarchy) build(provs []Provider, now time.Time, memo map[string]shared) (*Builder, map[string]time.Duration) {
again:
	b := NewBuilder(h.cfg.Base, h.cfg.Numbering, now)
	b.SetViews(h.cfg.Views)
	b.memo = memo
	disabled := h.Disabled()
	durs := make(map[string]time.Duration, len(provs))
	for _, p := range provs {
		name := p.Name()
		if why, ok := disabled[name]; ok {
			b.Fail(name, errors.New(why))
			continue
		}
		t0 := time.Now()
		b.SetProvider(name)
		panicked, err := collectGuarded(p, b)
		if panicked {
			h.disable(name, err)
			goto again
		}
		if err != nil {
			b.Fail(name, err)
		}
		durs[name] = time.Since(t0)
	}
	return b, durs
}

// collectGuarded calls p.Collect, turning a panic into an error.
func collectGuarded(p Provider, b *Builder) (panicked bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			panicked, err = true, fmt.Errorf("%v\n%s", r, debug.Stack())
		}
	}()
	return false, p.Collect(b)
}

// maxReason bounds the reason a provider was disabled (a DisplayString).
const maxReason = 255

// disable stops collecting the provider name, for the reason err (a
// panic with its stack, which is logged; the reason kept is its first line).
func (h *Hierarchy) disable(name string, err error) {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	why := "disabled after a panic: " + msg
	why = foldlog.Cut(why, maxReason)
	h.statsMu.Lock()
	if h.disabled == nil {
		h.disabled = map[string]string{}
	}
	h.disabled[name] = why
	h.statsMu.Unlock()
	h.log.Error("statistics provider disabled after a panic; the others serve on (restart the daemon to try it again)",
		"provider", name, "panic", err.Error())
}

// Disabled are the providers disabled after a panic, with the reason, by
// provider name.
func (h *Hierarchy) Disabled() map[string]string {
	h.statsMu.Lock()
	defer h.statsMu.Unlock()
	return maps.Clone(h.disabled)
}

// collectApart reads g in its own goroutine and publishes it when done;
// a collection of g already under way is not doubled. The channel is
// closed once the collection it started or joined is published.
func (h *Hierarchy) collectApart(g *group) chan struct{} {
	h.mu.Lock()
	if g.building != nil {
		defer h.mu.Unlock()
		return g.building
	}
	done := make(chan struct{})
	g.building = done
	g.inflight.Store(true)
	h.bg.Add(1)
	h.mu.Unlock()
	go func() {
		defer h.bg.Done()
		now := time.Now()
		pt := h.collectGroup(g, now, nil)
		h.publish([]*group{g}, []*part{pt}, now)
		h.mu.Lock()
		g.building = nil
		g.inflight.Store(false)
		h.mu.Unlock()
		close(done)
	}()
	return done
}

// publish installs the parts collected (unless a newer one of the same
// group was installed meanwhile) and publishes the snapshot of every
// group's part.
func (h *Hierarchy) publish(gs []*group, parts []*part, now time.Time) *Snapshot {
	h.mu.Lock()
	var gone []*part
	rebuilt := 0 // statistics of stable parts rebuilt
	for i, g := range gs {
		pt := parts[i]
		if g.part == pt || g.part != nil && pt.time.Before(g.part.time) {
			continue
		}
		if g.part != nil {
			gone = append(gone, g.part)
		}
		if g.stable != nil {
			rebuilt += pt.nstats
		}
		g.part, g.dirty = pt, false
	}
	// The snapshot's time is that of the values read with requests: the
	// oldest of their parts.
	all := make([]*part, 0, len(h.groups))
	var at time.Time
	for _, g := range h.groups {
		if g.part == nil {
			continue
		}
		all = append(all, g.part)
		if g.stable == nil && !g.apart() && (at.IsZero() || g.part.time.Before(at)) {
			at = g.part.time
		}
	}
	if at.IsZero() {
		at = now
	}
	s := assemble(h.cfg.Base, at, all, h.cfg.Spell)
	h.logFailures(s.Failures)
	h.statsMu.Lock()
	h.stats.Refreshes++
	h.stats.ReadErrors += uint64(len(s.Failures))
	h.statsMu.Unlock()
	h.snap.Store(s)
	h.peak = max(h.peak, s.NumStats)
	if rebuilt >= bigRebuild {
		// A large part was rebuilt: its builder's scratch is garbage now,
		// and so is the part it replaces once nothing holds it; the
		// runtime would keep their pages until its scavenger gets to them.
		h.mem.request(gone)
	} else if shrankMuch(h.peak, s.NumStats) {
		// Suppliers with many statistics left (at once or one by one
		// since the largest tree): give the memory of the tree they made
		// back now, not when the runtime's scavenger gets to it (a
		// daemon's size should follow what it serves).
		h.mem.request(gone)
		h.log.Info("the tree shrank; its memory goes back to the system", "statistics", s.NumStats, "largest", h.peak)
		h.peak = s.NumStats
	}
	complete := len(all) == len(h.groups)
	h.mu.Unlock()
	if complete && h.cfg.Numbering.SweepDue(now) {
		// Only with every group read: a group not read yet is not gone.
		if n := h.cfg.Numbering.Sweep(liveNames(all), now); n > 0 {
			h.log.Info("instance numbering: names gone for state.name_grace released", "names", n, "grace", h.cfg.Numbering.Grace())
		}
	}
	if err := h.cfg.Numbering.Save(); err != nil {
		h.mu.Lock()
		h.logOnce("numbering", err)
		h.mu.Unlock()
	}
	return s
}

// liveNames lists, by parent, the contexts and instances of parts: the
// names whose objects exist (Numbering.Sweep).
func liveNames(parts []*part) map[string]map[string]bool {
	live := map[string]map[string]bool{}
	for _, p := range parts {
		for n := range p.contexts() {
			if n.Parent == nil {
				continue
			}
			parent := spmiwire.CleanPath(n.Parent.Path)
			if live[parent] == nil {
				live[parent] = map[string]bool{}
			}
			live[parent][n.Name] = true
		}
	}
	return live
}
