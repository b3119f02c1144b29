package spmi

import (
	"fmt"
	"log/slog"
	"strings"
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
	Base asn1tree.OID
	// MinAge is how old values may be when they are served: older ones
	// are read again first (Fresh), and no reader makes the hierarchy
	// read them more often (FreshAfter).
	MinAge time.Duration
	// MaxAge gives top-level contexts that are costly to read (Proc with
	// thousands of processes) an age of their own: they are read apart,
	// in the background, while they are being read (and for WarmFor after
	// the last read), and a request waits for them only as fresh.go says
	// (an answer that finds them too old). They are read again every 20
	// times their last reading's duration (at most 5 % of a core), from
	// MinAge to MaxAge.
	MaxAge map[string]time.Duration
	// WarmFor is how long after its last read a context with its own
	// MaxAge is kept that fresh (0: 10 minutes); after that it is read at
	// the daemon's periodic refresh (Run) and when a read finds it old.
	WarmFor   time.Duration
	Numbering *Numbering
	Logger    *slog.Logger
	Views     Views // what the SNMP view serves; 0: both (TablesArc)
	// Spell gives a path its one spelling where an element may be
	// written more than one way (RTime/LAN's hosts: [::1], ::1); every
	// lookup, read, creation and deletion by path goes through it, so
	// that all readers (the CLI, libSpmi, the Go consumer) agree. Nil:
	// paths are taken as given.
	Spell func(path string) string
}

// RefreshStats describe the refreshes a Hierarchy has done.
type RefreshStats struct {
	Refreshes   uint64        // snapshots published: every reading of any context, apart ones included
	Requested   uint64        // readings requests started: values older than MinAge, a context read apart found too old
	ReadErrors  uint64        // source failures, summed over the collections
	LastTook    time.Duration // the last reading of the contexts read with requests (collect)
	ProviderDur map[string]time.Duration
}

// Hierarchy owns the providers and publishes snapshots. Its providers are
// collected in groups, one per top-level context (providers that add to
// the same one, RTime/ARM and RTime/LAN, are collected together), each
// group into a part of its own; a snapshot is the parts of every group,
// each as old as its group allows. It is safe for concurrent use.
type Hierarchy struct {
	cfg Config
	log *slog.Logger

	mu      sync.Mutex // guards groups and their parts, failing, peak; orders publishing
	groups  []*group
	failing map[string]string // source -> last error text, to log changes once
	peak    int               // most statistics since memory was last returned

	// statsMu is separate from mu so that providers may read the
	// statistics of the previous refresh while a refresh runs.
	statsMu  sync.Mutex
	stats    RefreshStats
	disabled map[string]string // providers that panicked, with the reason (disable)

	snap  atomic.Pointer[Snapshot]
	mem   memoryReturner
	bg    sync.WaitGroup // readings in their own goroutine (startReading, collectApart)
	stale atomic.Bool    // Invalidate was called since the last request refresh began

	flightMu sync.Mutex
	flight   chan struct{} // closed when the request refresh in flight ends

	wake chan struct{} // a context read apart became warm (Run)

	onProviders atomic.Pointer[func()] // SetOnProviders
}

// SetOnProviders makes Add and Remove call f after the providers changed
// (the directory looks at the tree then); f must not block.
func (h *Hierarchy) SetOnProviders(f func()) { h.onProviders.Store(&f) }

// providersChanged tells SetOnProviders' f. Called without mu.
func (h *Hierarchy) providersChanged() {
	if f := h.onProviders.Load(); f != nil {
		(*f)()
	}
}

// NewHierarchy returns a Hierarchy with no providers.
func NewHierarchy(cfg Config) *Hierarchy {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Numbering == nil {
		cfg.Numbering = NewNumbering("")
	}
	if cfg.WarmFor <= 0 {
		cfg.WarmFor = 10 * time.Minute
	}
	return &Hierarchy{cfg: cfg, log: cfg.Logger, failing: map[string]string{}, wake: make(chan struct{}, 1)}
}

// Base is the OID the tree is attached under.
func (h *Hierarchy) Base() asn1tree.OID { return h.cfg.Base }

// Add registers a provider; its nodes appear from the next refresh on.
// Providers whose names share the first path element ("RTime/ARM" and
// "RTime") add to the same top-level context and are collected together.
func (h *Hierarchy) Add(p Provider) {
	defer h.providersChanged()
	h.mu.Lock()
	defer h.mu.Unlock()
	key, _, _ := strings.Cut(p.Name(), "/")
	for _, g := range h.groups {
		if g.name == key && g.stable == nil {
			if _, ok := p.(StableProvider); !ok {
				g.provs = append(g.provs, p)
				return
			}
		}
	}
	g := &group{name: key, provs: []Provider{p}, maxAge: h.cfg.MaxAge[key], h: h}
	if sp, ok := p.(StableProvider); ok {
		g.stable, g.maxAge = sp, 0
	}
	h.groups = append(h.groups, g)
}

// Remove drops the provider with the given name.
func (h *Hierarchy) Remove(name string) {
	defer h.providersChanged()
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, g := range h.groups {
		for j, p := range g.provs {
			if p.Name() != name {
				continue
			}
			g.provs = append(g.provs[:j:j], g.provs[j+1:]...)
			if len(g.provs) == 0 {
				h.groups = append(h.groups[:i:i], h.groups[i+1:]...)
			} else {
				g.dirty = true // read again without it
			}
			return
		}
	}
}

// providers lists every provider, in the order added.
func (h *Hierarchy) providers() []Provider {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Provider
	for _, g := range h.groups {
		out = append(out, g.provs...)
	}
	return out
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

// Ages describes, per top-level context, how old the values of the
// current snapshot are and how old they may get.
type Ages struct {
	Context string
	Age     time.Duration // at now
	MaxAge  time.Duration // how old it may get: MinAge, or its own (Config.MaxAge)
	Apart   bool          // read in the background, never waited for
}

// Ages of the current snapshot's contexts at now.
func (h *Hierarchy) Ages(now time.Time) []Ages {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Ages, 0, len(h.groups))
	for _, g := range h.groups {
		if g.part == nil {
			continue
		}
		a := Ages{Context: g.name, Age: now.Sub(g.part.time), MaxAge: g.age(h.cfg.MinAge), Apart: g.apart()}
		if !a.Apart {
			a.MaxAge = h.cfg.MinAge
		}
		if g.stable != nil {
			a.Age, a.MaxAge = 0, 0 // values read when asked for
		}
		out = append(out, a)
	}
	return out
}

// Current returns the last published snapshot without refreshing (nil
// before the first refresh).
func (h *Hierarchy) Current() *Snapshot { return h.snap.Load() }

// Refresh reads every context now, waiting for every part (the first
// snapshot, tools and tests), and publishes the snapshot.
func (h *Hierarchy) Refresh() *Snapshot { return h.collect(collectAll) }

// RefreshBackground is the daemon's own periodic refresh (Run): every
// context older than its age is read again, and nothing waits for a part
// whose structure changed.
func (h *Hierarchy) RefreshBackground() *Snapshot { return h.collect(collectDue) }

// String summarizes the hierarchy for logs.
func (h *Hierarchy) String() string {
	s := h.snap.Load()
	if s == nil {
		return "hierarchy (not yet refreshed)"
	}
	return fmt.Sprintf("hierarchy of %d statistics under %s", s.NumStats, s.Base)
}

// logFailures logs each source when it starts failing, when its error
// changes and when it recovers: once per change, not once per refresh.
// Called with mu held.
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

// Invalidate makes the next Fresh or FreshWithin read the contexts again
// whatever their age: a provider whose contexts changed (a host created,
// a supplier came or went) calls it so that the next read sees the change.
func (h *Hierarchy) Invalidate() { h.stale.Store(true) }

// bigRebuild is the size of a stable part's rebuild after which memory
// is returned to the system at once.
const bigRebuild = 10000

// shrankMuch tells a drop of the tree worth returning memory for: a
// quarter of it, and at least 10,000 statistics.
func shrankMuch(before, after int) bool {
	return before-after >= 10000 && after < before*3/4
}
