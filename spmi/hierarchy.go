package spmi

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

// Provider adds one part of the hierarchy (usually one top-level context)
// and its current values to a Builder. Collect reads its sources once per
// call; a source that fails is reported with Builder.Fail and the
// statistics depending on it get NoValue, so the rest keeps working.
type Provider interface {
	Name() string
	Collect(b *Builder) error
}

// StableProvider is a Provider whose part of the tree changes only when
// its Shape does (a comparable value: the DDS registrations). Its part is
// built alone and reused, untouched, by every refresh until then; its
// statistics are live (Builder.LiveBlock, LiveStat) or constant. Its top-level
// contexts are its own: no other provider may add under them.
type StableProvider interface {
	Provider
	Shape() any
}

// Config sets up a Hierarchy.
type Config struct {
	Base      asn1tree.OID
	MinAge    time.Duration // a snapshot younger than this is served as it is
	Numbering *Numbering
	Logger    *slog.Logger
	Views     Views // what the SNMP view serves; 0: both (TablesArc)
}

// RefreshStats describe the refreshes a Hierarchy has done.
type RefreshStats struct {
	Refreshes   uint64
	ReadErrors  uint64 // source failures, summed over refreshes
	LastTook    time.Duration
	ProviderDur map[string]time.Duration
}

// Hierarchy owns the providers and publishes snapshots. It is safe for
// concurrent use; readers never wait for a refresh unless they ask to.
type Hierarchy struct {
	cfg Config
	log *slog.Logger

	mu        sync.Mutex // guards providers and serializes refreshes
	providers []Provider
	failing   map[string]string // source -> last error text, to log changes once

	// statsMu is separate from mu so that providers may read the
	// statistics of the previous refresh while a refresh runs.
	statsMu sync.Mutex
	stats   RefreshStats

	parts  map[string]*part // the stable providers' last parts, by name
	peak   int              // most statistics since memory was last returned
	snap   atomic.Pointer[Snapshot]
	mem    memoryReturner
	stale  atomic.Bool   // Invalidate was called since the last refresh began
	done   chan struct{} // closed when the refresh in flight ends
	doneMu sync.Mutex
}

// NewHierarchy returns a Hierarchy with no providers.
func NewHierarchy(cfg Config) *Hierarchy {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Numbering == nil {
		cfg.Numbering = NewNumbering("")
	}
	return &Hierarchy{cfg: cfg, log: cfg.Logger, failing: map[string]string{}}
}

// Base is the OID the tree is attached under.
func (h *Hierarchy) Base() asn1tree.OID { return h.cfg.Base }

// Add registers a provider; its nodes appear from the next refresh on.
func (h *Hierarchy) Add(p Provider) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.providers = append(h.providers, p)
}

// Remove drops the provider with the given name.
func (h *Hierarchy) Remove(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, p := range h.providers {
		if p.Name() == name {
			h.providers = append(h.providers[:i:i], h.providers[i+1:]...)
			delete(h.parts, name)
			return
		}
	}
}

// Stats returns a copy of the refresh statistics.
func (h *Hierarchy) Stats() RefreshStats {
	h.statsMu.Lock()
	defer h.statsMu.Unlock()
	s := h.stats
	s.ProviderDur = make(map[string]time.Duration, len(h.stats.ProviderDur))
	for k, v := range h.stats.ProviderDur {
		s.ProviderDur[k] = v
	}
	return s
}

// Current returns the last published snapshot without refreshing (nil
// before the first refresh).
func (h *Hierarchy) Current() *Snapshot { return h.snap.Load() }

// Refresh builds and publishes a new snapshot now.
func (h *Hierarchy) Refresh() *Snapshot {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.refreshLocked(false)
}

// RefreshBackground is Fresh for the daemon's own periodic refresh: the
// build is marked as nobody's read (Builder.Background), so providers that
// tell their sources who reads them (DDS's SiShInterval) leave it out.
func (h *Hierarchy) RefreshBackground() *Snapshot {
	if s := h.snap.Load(); h.young(s) {
		return s
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.snap.Load(); h.young(s) {
		return s
	}
	return h.refreshLocked(true)
}

func (h *Hierarchy) refreshLocked(background bool) *Snapshot {
	// Cleared before the build: a change during it marks the result stale.
	h.stale.Store(false)
	start := time.Now()
	b := h.builder(start, background)
	durs := make(map[string]time.Duration, len(h.providers))
	var stable, gone []*part
	rebuilt := 0 // statistics of the stable parts this refresh rebuilt
	for _, p := range h.providers {
		t0 := time.Now()
		if sp, ok := p.(StableProvider); ok {
			old := h.parts[p.Name()]
			pt, fresh := h.stablePart(sp, start, background)
			if fresh {
				rebuilt += pt.nstats
				if old != nil {
					gone = append(gone, old)
				}
			}
			stable = append(stable, pt)
		} else {
			b.SetProvider(p.Name())
			if err := p.Collect(b); err != nil {
				b.Fail(p.Name(), err)
			}
		}
		durs[p.Name()] = time.Since(t0)
	}
	s := assemble(b.base, start, b.finishPart(nil), stable)
	h.logFailures(s.Failures)
	if err := h.cfg.Numbering.Save(); err != nil {
		h.logOnce("numbering", err)
	}
	h.statsMu.Lock()
	h.stats.Refreshes++
	h.stats.ReadErrors += uint64(len(s.Failures))
	h.stats.LastTook = time.Since(start)
	h.stats.ProviderDur = durs
	h.statsMu.Unlock()
	if prev := h.snap.Swap(s); prev != nil {
		gone = append(gone, prev.main)
	}
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
	return s
}

func (h *Hierarchy) builder(now time.Time, background bool) *Builder {
	b := NewBuilder(h.cfg.Base, h.cfg.Numbering, now)
	b.SetViews(h.cfg.Views)
	b.background = background
	return b
}

// stablePart returns p's part: the last one while its shape is the same,
// else a new one (fresh). Called with mu held.
func (h *Hierarchy) stablePart(p StableProvider, now time.Time, background bool) (pt *part, fresh bool) {
	shape := p.Shape()
	if old := h.parts[p.Name()]; old != nil && old.shape == shape {
		return old, false
	}
	b := h.builder(now, background)
	b.SetProvider(p.Name())
	if err := p.Collect(b); err != nil {
		b.Fail(p.Name(), err)
	}
	pt = b.finishPart(shape)
	pt.name = p.Name()
	if h.parts == nil {
		h.parts = map[string]*part{}
	}
	h.parts[p.Name()] = pt
	return pt, true
}

// logFailures logs each source when it starts failing, when its error
// changes and when it recovers: once per change, not once per refresh.
func (h *Hierarchy) logFailures(f map[string]error) {
	for src, err := range f {
		h.logOnce(src, err)
	}
	for src := range h.failing {
		if _, still := f[src]; !still && src != "numbering" {
			delete(h.failing, src)
			h.log.Info("source readable again", "source", src)
		}
	}
}

func (h *Hierarchy) logOnce(src string, err error) {
	msg := err.Error()
	if h.failing[src] == msg {
		return
	}
	h.failing[src] = msg
	h.log.Warn("source unreadable; its statistics have no value", "source", src, "err", msg)
}

// Invalidate makes the next Fresh or FreshWithin refresh whatever the
// snapshot's age: a provider whose contexts changed (a supplier came or
// went) calls it so that the next walk sees the change.
func (h *Hierarchy) Invalidate() { h.stale.Store(true) }

// young tells whether s may be served without a refresh.
func (h *Hierarchy) young(s *Snapshot) bool {
	return s != nil && time.Since(s.Time) < h.cfg.MinAge && !h.stale.Load()
}

// Fresh returns a snapshot no older than the minimum age, refreshing when
// needed; concurrent callers share one refresh.
func (h *Hierarchy) Fresh() *Snapshot { return h.FreshAfter(time.Time{}) }

// FreshAfter is Fresh for a reader that has seen the snapshot of time t
// (a statset's previous read): it refreshes, even within the minimum age,
// unless the snapshot is newer than t.
func (h *Hierarchy) FreshAfter(t time.Time) *Snapshot {
	ok := func(s *Snapshot) bool {
		return h.young(s) && s.Time.After(t)
	}
	if s := h.snap.Load(); ok(s) {
		return s
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.snap.Load(); ok(s) {
		return s
	}
	return h.refreshLocked(false)
}

// FreshWithin is Fresh for callers that must not wait long (the SNMP front
// ends, whose master drops a subagent that is slow): when the snapshot is
// stale it starts a refresh in the background and waits at most wait for
// it (0: not at all), then serves what it has. Only the first snapshot is
// always waited for.
func (h *Hierarchy) FreshWithin(wait time.Duration) *Snapshot {
	s := h.snap.Load()
	if h.young(s) {
		return s
	}
	if s == nil {
		return h.Fresh()
	}
	h.doneMu.Lock()
	if h.done == nil {
		h.done = make(chan struct{})
		done := h.done
		go func() {
			h.Fresh()
			h.doneMu.Lock()
			h.done = nil
			h.doneMu.Unlock()
			close(done)
		}()
	}
	done := h.done
	h.doneMu.Unlock()
	if wait <= 0 {
		return s
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
	return h.snap.Load()
}

// Run refreshes every interval until ctx is done (interval <= 0: never).
func (h *Hierarchy) Run(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		<-ctx.Done()
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			h.RefreshBackground()
		}
	}
}

// Read implements Source on the freshest snapshot.
func (h *Hierarchy) Read(_ context.Context, paths []string) (Sample, error) {
	return h.Fresh().Read(paths)
}

// ReadAfter implements AfterSource.
func (h *Hierarchy) ReadAfter(_ context.Context, paths []string, t time.Time) (Sample, error) {
	return h.FreshAfter(t).Read(paths)
}

// String summarizes the hierarchy for logs.
func (h *Hierarchy) String() string {
	s := h.snap.Load()
	if s == nil {
		return "hierarchy (not yet refreshed)"
	}
	return fmt.Sprintf("hierarchy of %d statistics under %s", s.NumStats, s.Base)
}

// bigRebuild is the size of a stable part's rebuild after which memory
// is returned to the system at once.
const bigRebuild = 10000

// shrankMuch tells a drop of the tree worth returning memory for: a
// quarter of it, and at least 10,000 statistics.
func shrankMuch(before, after int) bool {
	return before-after >= 10000 && after < before*3/4
}
