package spmi

import (
	"context"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/spmiwire"
)

// young tells whether s may be served without reading again. Since reads
// only the monotonic clock: it is on every request's path.
func (h *Hierarchy) young(s *Snapshot) bool {
	return s != nil && time.Since(s.Time) < h.cfg.MinAge && !h.stale.Load()
}

// Fresh returns a snapshot whose values are younger than MinAge, reading
// them now when needed (concurrent callers share one reading), and with
// the parts whose structure changed (a supplier registered, even within
// MinAge) rebuilt. Contexts read apart (Config.MaxAge) are served as they
// are.
func (h *Hierarchy) Fresh() *Snapshot {
	h.freshen(-1)
	// A rebuild under way may have read the shape before a later change:
	// after it, one of the new shape. A few rounds at most, so that a
	// supplier changing without pause cannot hold a reader.
	for range 3 {
		ch := h.rebuilding()
		if len(ch) == 0 {
			break
		}
		for _, c := range ch {
			<-c
		}
	}
	// Loaded after rebuilding saw no rebuild under way: one that the
	// reading started and that published meanwhile is in it.
	return h.snap.Load()
}

// FreshAfter is Fresh for a reader that has seen the snapshot of time t
// (a statset's previous read) and wants newer values. They come once the
// values it has seen are MinAge old, never sooner: whatever t a reader
// sends, the contexts are read at most once per MinAge.
func (h *Hierarchy) FreshAfter(t time.Time) *Snapshot {
	s := h.snap.Load()
	if h.young(s) {
		if s.Time.After(t) {
			return s
		}
		wait := time.NewTimer(h.cfg.MinAge - time.Since(s.Time))
		<-wait.C
	}
	return h.Fresh()
}

// FreshWithin is Fresh for the SNMP front ends, whose master drops a
// subagent that is slow: it waits at most wait (0: not at all) for the
// values read with requests and serves what it has then; it never waits
// for a part whose structure changed (rebuilt apart, served when done).
// Only the first snapshot is always waited for.
func (h *Hierarchy) FreshWithin(wait time.Duration) *Snapshot {
	if wait < 0 {
		wait = 0
	}
	return h.freshen(wait)
}

// freshen reads the values of requests when s is not young, waiting at
// most wait for them (< 0: until done).
func (h *Hierarchy) freshen(wait time.Duration) *Snapshot {
	s := h.snap.Load()
	if h.young(s) {
		return s
	}
	if s == nil {
		return h.Refresh()
	}
	done := h.startReading()
	switch {
	case wait < 0:
		<-done
	case wait > 0:
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
		}
	}
	return h.snap.Load()
}

// startReading starts the reading of the values of requests unless one
// is under way; the channel is closed when it is published.
func (h *Hierarchy) startReading() chan struct{} {
	h.flightMu.Lock()
	defer h.flightMu.Unlock()
	if h.flight == nil {
		done := make(chan struct{})
		h.flight = done
		h.requested()
		h.bg.Add(1)
		go func() {
			defer h.bg.Done()
			h.collect(collectRequest)
			h.flightMu.Lock()
			h.flight = nil
			h.flightMu.Unlock()
			close(done)
		}()
	}
	return h.flight
}

// rebuilding starts rebuilding the stable parts whose shape changed (a
// supplier registered since the last reading) and returns the channels
// of those and of every other stable part being rebuilt. A rebuild it
// started may be done already: its channel is returned all the same, so
// that the caller loads the snapshot it published.
func (h *Hierarchy) rebuilding() []chan struct{} {
	var changed []*group
	var out []chan struct{}
	h.mu.Lock()
	for _, g := range h.groups {
		switch {
		case g.stable == nil:
		case g.building != nil:
			out = append(out, g.building)
		case g.part != nil && (g.dirty || g.part.shape != g.stable.Shape()):
			changed = append(changed, g)
		}
	}
	h.mu.Unlock()
	for _, g := range changed {
		out = append(out, h.collectApart(g))
	}
	return out
}

// Run is the daemon's background reading until ctx is done: every
// interval, every context older than its age (RefreshBackground; interval
// <= 0: never), and each context with its own age every MaxAge while it
// is read (and WarmFor after), so that its readers never wait for it.
func (h *Hierarchy) Run(ctx context.Context, interval time.Duration) {
	last := time.Now()
	for {
		now := time.Now()
		next := h.warmDue(now)
		if interval > 0 && (next.IsZero() || last.Add(interval).Before(next)) {
			next = last.Add(interval)
		}
		var tick <-chan time.Time
		var t *time.Timer
		if !next.IsZero() {
			t = time.NewTimer(next.Sub(now))
			tick = t.C
		}
		select {
		case <-ctx.Done():
			if t != nil {
				t.Stop()
			}
			return
		case <-tick:
		case <-h.wake:
			if t != nil {
				t.Stop()
			}
		}
		now = time.Now()
		if interval > 0 && !now.Before(last.Add(interval)) {
			h.RefreshBackground()
			last = now
		}
		h.readWarm(now)
	}
}

// warmDue is when the next context read apart is due; zero when none is
// read now. A context whose reading is under way is looked at again
// after its age.
func (h *Hierarchy) warmDue(now time.Time) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	var next time.Time
	for _, g := range h.groups {
		if !g.apart() || g.part == nil || !h.warm(g, now) {
			continue
		}
		due := g.part.time.Add(g.age(h.cfg.MinAge))
		if g.building != nil {
			due = now.Add(g.age(h.cfg.MinAge))
		}
		if next.IsZero() || due.Before(next) {
			next = due
		}
	}
	return next
}

// readWarm starts reading the contexts read apart that are due.
func (h *Hierarchy) readWarm(now time.Time) {
	h.mu.Lock()
	var due []*group
	for _, g := range h.groups {
		if g.apart() && g.part != nil && h.warm(g, now) && now.Sub(g.part.time) >= g.age(h.cfg.MinAge) {
			due = append(due, g)
		}
	}
	h.mu.Unlock()
	for _, g := range due {
		h.collectApart(g)
	}
}

// warm tells whether g was read within WarmFor.
func (h *Hierarchy) warm(g *group, now time.Time) bool {
	return now.UnixNano()-g.read.Load() < int64(h.cfg.WarmFor)
}

// readApart records that an answer read g's part p at now; a part older
// than its age starts a reading (the first read after a while without
// any), which the answer does not wait for.
func (h *Hierarchy) readApart(g *group, p *part, now time.Time) {
	if ns := now.UnixNano(); g.read.Load() < ns-int64(readMark) {
		if !h.warm(g, now) {
			select { // Run looks at the warm contexts again
			case h.wake <- struct{}{}:
			default:
			}
		}
		g.read.Store(ns)
	}
	if now.Sub(p.time) >= g.age(h.cfg.MinAge) && !g.inflight.Load() {
		h.requested()
		h.collectApart(g)
	}
}

// requested counts a reading a request started (RefreshStats.Requested).
func (h *Hierarchy) requested() {
	h.statsMu.Lock()
	h.stats.Requested++
	h.statsMu.Unlock()
}

// An answer waits for a context read apart, as requests wait for the
// others, when the part it would serve is older than MinAge and
//   - lacks the instance asked for (a process newer than its reading:
//     missing), or
//   - sat unread (not warm: read at Run's interval only) or is older than
//     its MaxAge (cold): the first walk after a pause reads what it walks.
// It waits at most its wait in all (Snapshot.AnswerWithin: the SNMP
// front ends' refresh.snmp_wait), and from then on serves the snapshot
// with the new reading.

// missing tells whether a request for an instance that p lacks waits for
// p's group to be read again.
func (r *Answer) missing(p *part) bool {
	return p != nil && p.g != nil && p.g.apart() && r.clock().Sub(p.time) >= p.g.h.cfg.MinAge
}

// cold tells whether the answer waits for p's group to be read again
// before it serves p's values.
func (r *Answer) cold(p *part) bool {
	if !r.missing(p) {
		return false
	}
	now := r.clock()
	return !p.g.h.warm(p.g, now) || now.Sub(p.time) > p.g.maxAge
}

// reread reads p's group again and waits for it, within what is left of
// the answer's RequestWait; it tells whether the answer moved to a
// snapshot with a newer part of the group.
func (r *Answer) reread(p *part) bool {
	g := p.g
	h := g.h
	left := r.wait - r.waited
	if left <= 0 {
		return false
	}
	start := time.Now()
	if !g.inflight.Load() {
		h.requested()
	}
	done := h.collectApart(g)
	t := time.NewTimer(left)
	select {
	case <-done:
	case <-t.C:
	}
	t.Stop()
	r.waited += time.Since(start)
	s := h.snap.Load()
	if len(p.top.Children) == 0 {
		return false
	}
	if np := s.route[p.top.Children[0].Name]; np == nil || !np.time.After(p.time) {
		return false
	}
	r.s, r.last, r.touched = s, nil, nil
	r.moved.Store(s)
	return true
}

// ownerOf is the part of s that serves name, or would serve it if it
// had it: the part of the top-level context name is under (base.<asn>...
// for scalars, base.<TablesArc+depth>.<k>.<asn>... for tables); nil
// when none.
func (s *Snapshot) ownerOf(name asn1tree.OID) *part {
	if !name.HasPrefix(s.Base) || len(name) == len(s.Base) {
		return nil
	}
	rel := name[len(s.Base):]
	asn := rel[0]
	if asn >= TablesArc && asn <= TablesArc+MaxTableDepth {
		if len(rel) < 3 || rel[1] == 0 {
			return nil
		}
		asn = rel[2]
	}
	if c := s.Top.childASN(asn); c != nil {
		return s.route[c.Name]
	}
	return nil
}

// readCost is how many times its reading's duration a context read apart
// waits before it is read again: its background reading takes at most
// 1/readCost of one core (5 %), and a context cheap to read on this host
// (Proc with 300 processes, 15 ms) is as fresh as min_age allows.
const readCost = 20

// age is how old a group read apart may get before it is read again:
// readCost times its last reading, from minAge to its maxAge.
func (g *group) age(minAge time.Duration) time.Duration {
	return min(max(readCost*time.Duration(g.took.Load()), minAge), g.maxAge)
}

// readMark is how precisely the last read of a group is kept: answers
// store it at most that often.
const readMark = 100 * time.Millisecond

// Read implements Source on a fresh snapshot.
func (h *Hierarchy) Read(_ context.Context, paths []string) (spmiwire.Sample, error) {
	return h.Fresh().Read(paths)
}

// ReadAfter implements AfterSource.
func (h *Hierarchy) ReadAfter(_ context.Context, paths []string, t time.Time) (spmiwire.Sample, error) {
	return h.FreshAfter(t).Read(paths)
}
