package asn1tree

import (
	"encoding/binary"
	"hash/maphash"
	"sync/atomic"
	"time"
)

// Source gives a front end the views it answers from. Called with nil it
// returns a view of the current moment and a handle on that moment; called
// with a handle it returned, a view of that same moment. Handles are
// opaque to the front ends; a nil handle means the source cannot go back
// to the moment, so a walk answered from it cannot be kept consistent.
type Source func(at any) (View, any)

// Latest is the Source of a function that only knows the current view.
func Latest(view func() View) Source {
	return func(any) (View, any) { return view(), nil }
}

// Defaults and bounds of Walks.
const (
	DefaultWalkGap  = 5 * time.Second
	DefaultWalkHold = 60 * time.Second
	DefaultWalkMax  = 256
	// DefaultWalkBudget is the default of Walks.Budget: 6 moments of a
	// 100,000-statistic tree (spmi.Snapshot.Bytes estimates 4.6 MiB).
	DefaultWalkBudget = 32 << 20
	// MaxWalkEnds is how many of a response's last varbind names are kept:
	// a row of up to 128 columns.
	MaxWalkEnds = 128
)

// Walks remembers where the recent walks of a front end's peers stopped,
// so that all the requests of one walk are answered from the moment its
// first request was: a table read column after column or row after row
// then shows each row as one moment had it, never cells of different
// moments.
//
// The rule: a GetNext or GetBulk continues a walk when it comes from the
// same peer and its first search OID (a GetBulk's first repeater's, where
// it has one) is one of the OIDs at which one of the last two responses of
// that walk ended, at most Gap after that walk's last response and at most
// Hold after its first request. Otherwise it starts a walk at the current
// moment. A response ends at the names of its last MaxWalkEnds varbinds:
// those of a GetNext, or the last repetition of a GetBulk with up to
// MaxWalkEnds repeaters, which is where a manager asks from next. The
// front ends leave out endOfMibView varbinds: their name is the request's,
// from which no walk goes on (recorded, a table read again and again while
// it is empty would be answered from the first read's moment). The
// response before the last counts too, so that a manager's retry of a
// request whose response was lost still continues its walk. When several
// walks of one peer qualify (managers behind one AgentX master walking the
// same table in step), the one answered last is continued.
//
// Bounds: at most Max walks are remembered, the least recently answered
// making room for a new one. The moments they keep alive take at most
// Budget bytes together, or with Shared, together with the walks of the
// other front ends sharing that WalkBudget, as the moments tell (Pinned;
// one moment kept by several walks counts once, moments that do not tell
// count nothing): a walk whose moment would take the total over the
// budget makes the oldest walks (by their first request, of any Walks
// sharing the budget) fall back to the current moment: they
// go on, answered from whatever moment is current at each of their
// requests, and are counted (FellBack). The walk being answered keeps its
// moment even when that alone exceeds Budget. A walk keeps its moment and the 64-bit hashes
// (not the OIDs) of at most 2×MaxWalkEnds names, 2 KiB. A walk idle for
// longer than Gap, or older than Hold, is forgotten within Gap more, with
// its moment, even when no request comes. A hash collision could only
// make a request continue another recent walk of the same peer: answers
// stay correct, as of a slightly older moment.
//
// The zero value is ready to use, with the defaults for zero limits; set
// the limits before the first use. P identifies a peer (the manager's
// address, an AgentX session). Walks is safe for concurrent use.
type Walks[P comparable] struct {
	Gap  time.Duration // default DefaultWalkGap
	Hold time.Duration // default DefaultWalkHold
	Max  int           // default DefaultWalkMax
	// Budget is the bytes the walks' moments may keep alive together;
	// default DefaultWalkBudget. Unused with Shared.
	Budget int64
	// Shared, when set, is the budget these walks share with other front
	// ends' (WalkBudget); its lock is theirs too.
	Shared *WalkBudget

	own    WalkBudget  // the budget without Shared
	bud    *WalkBudget // Shared or &own, once joined (under its lock)
	seed   maphash.Seed
	seeded bool
	walks  []walk[P] // a free slot has a nil moment
	serial uint64    // of the last walk started
	timer  *time.Timer
	armed  bool
	fell   atomic.Uint64
}

// lock takes the budget's lock, joining the budget at the first use; the
// caller unlocks the budget returned.
func (w *Walks[P]) lock() *WalkBudget {
	b := w.Shared
	if b == nil {
		b = &w.own
	}
	b.mu.Lock()
	if w.bud == nil {
		if b == &w.own {
			b.limit = w.Budget
		}
		w.bud = b
		b.members = append(b.members, w)
	}
	return b
}

// Pinned is implemented by moments that know what they keep alive: key
// is what moments of the same data share (counted once), bytes an
// estimate of its size.
type Pinned interface {
	Pinned() (key any, bytes int64)
}

// pin is one kept moment's key: its bytes and the walks keeping it.
type pin struct {
	bytes int64
	walks int
}

// current marks a walk that fell back to the current moment: it holds no
// moment of its own.
type current struct{}

type walk[P comparable] struct {
	peer        P
	at          any // the moment; nil: a free slot
	serial      uint64
	first, last time.Time // the first request, the last response
	ends, prev  []uint64  // hashes of where the last two responses ended
	fell        bool      // fell back to the current moment once (counted)
}

// Step is a request's place among the walks: the moment to answer it from
// and the walk it continues, to hand back to Record.
type Step struct {
	at     any
	slot   int
	serial uint64 // 0: no walk
}

// At is the moment to answer from; nil for the current one.
func (s Step) At() any { return s.at }

func (w *Walks[P]) gap() time.Duration  { return cmpOr(w.Gap, DefaultWalkGap) }
func (w *Walks[P]) hold() time.Duration { return cmpOr(w.Hold, DefaultWalkHold) }
func (w *Walks[P]) max() int            { return cmpOr(w.Max, DefaultWalkMax) }
func cmpOr[T time.Duration | int](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// expired reports whether e can no longer be continued at now.
func (w *Walks[P]) expired(e *walk[P], now time.Time) bool {
	return now.Sub(e.last) > w.gap() || now.Sub(e.first) > w.hold()
}

// drop frees e's slot and what it holds (the moment above all).
func (w *Walks[P]) drop(e *walk[P]) {
	var zero P
	w.keep(e, nil)
	e.peer, e.serial, e.fell = zero, 0, false
	e.ends, e.prev = e.ends[:0], e.prev[:0]
}

// keep makes at e's moment, counting what the moments pin. The budget's
// lock is held.
func (w *Walks[P]) keep(e *walk[P], at any) {
	w.bud.unpin(e.at)
	e.at = at
	w.bud.pin(at)
}

// oldestPinned is the first request of the oldest walk other than keep
// that keeps a moment which tells its size. The budget's lock is held.
func (w *Walks[P]) oldestPinned(keep any) (time.Time, bool) {
	if e := w.oldest(keep); e != nil {
		return e.first, true
	}
	return time.Time{}, false
}

func (w *Walks[P]) oldest(keep any) *walk[P] {
	var old *walk[P]
	for i := range w.walks {
		e := &w.walks[i]
		if _, ok := e.at.(Pinned); !ok || any(e) == keep {
			continue
		}
		if old == nil || e.first.Before(old.first) {
			old = e
		}
	}
	return old
}

// fallBackOldest moves that walk to the current moment, counted once per
// walk. The budget's lock is held.
func (w *Walks[P]) fallBackOldest(keep any) {
	old := w.oldest(keep)
	if old == nil {
		return
	}
	w.keep(old, current{})
	if !old.fell {
		old.fell = true
		w.fell.Add(1)
	}
}

// FellBack is how many walks fell back to the current moment for the
// budget since w was made.
func (w *Walks[P]) FellBack() uint64 { return w.fell.Load() }

// PinnedBytes is what the walks' moments keep alive, as they tell: with
// Shared, those of every Walks sharing it.
func (w *Walks[P]) PinnedBytes() int64 {
	b := w.lock()
	defer b.mu.Unlock()
	return b.pinned
}

// Lookup finds the walk that a GetNext or GetBulk from peer whose first
// search OID is first continues. The Step's At is that walk's moment, or
// nil when the request starts a walk.
func (w *Walks[P]) Lookup(peer P, first OID) Step {
	b := w.lock()
	defer b.mu.Unlock()
	now := time.Now()
	h := w.hash(first)
	best := -1
	for i := range w.walks {
		e := &w.walks[i]
		if e.at == nil || e.peer != peer || !has(e.ends, h) && !has(e.prev, h) {
			continue
		}
		if w.expired(e, now) {
			w.drop(e)
			continue
		}
		if best < 0 || e.last.After(w.walks[best].last) {
			best = i
		}
	}
	if best < 0 {
		return Step{}
	}
	e := &w.walks[best]
	at := e.at
	if _, ok := at.(current); ok {
		at = nil
	}
	return Step{at: at, slot: best, serial: e.serial}
}

func has(hs []uint64, h uint64) bool {
	for _, x := range hs {
		if x == h {
			return true
		}
	}
	return false
}

// Record notes that the response to peer's GetNext or GetBulk, answered
// from moment at, ended at names (only the last MaxWalkEnds count; the
// OIDs are not kept). s is what Lookup returned, or what Record returned
// for an earlier response to the same request (AgentX answers one SNMP
// request in several PDUs): the walk it names goes on, otherwise a walk
// starts. A nil moment records nothing. The returned Step names the walk.
func (w *Walks[P]) Record(s Step, peer P, at any, names []OID) Step {
	if at == nil {
		return Step{}
	}
	if len(names) > MaxWalkEnds {
		names = names[len(names)-MaxWalkEnds:]
	}
	b := w.lock()
	defer b.mu.Unlock()
	now := time.Now()
	var e *walk[P]
	if s.serial != 0 && s.slot < len(w.walks) && w.walks[s.slot].serial == s.serial {
		e = &w.walks[s.slot]
	} else {
		s.slot = w.free(now)
		e = &w.walks[s.slot]
		w.serial++
		e.peer, e.serial, e.first = peer, w.serial, now
	}
	w.keep(e, at)
	e.last = now
	w.bud.fit(e)
	e.prev, e.ends = e.ends, e.prev[:0]
	if cap(e.ends) < len(names) {
		e.ends = make([]uint64, 0, len(names)) // at most MaxWalkEnds
	}
	for _, n := range names {
		e.ends = append(e.ends, w.hash(n))
	}
	w.arm()
	return Step{at: at, slot: s.slot, serial: e.serial}
}

// free returns a slot for a new walk: a free or expired one, a new one
// while there are fewer than Max, else the least recently answered.
func (w *Walks[P]) free(now time.Time) int {
	lru := -1
	for i := range w.walks {
		e := &w.walks[i]
		if e.at == nil || w.expired(e, now) {
			w.drop(e)
			return i
		}
		if lru < 0 || e.last.Before(w.walks[lru].last) {
			lru = i
		}
	}
	if len(w.walks) < w.max() {
		w.walks = append(w.walks, walk[P]{})
		return len(w.walks) - 1
	}
	w.drop(&w.walks[lru])
	return lru
}

// arm makes sure a sweep comes within Gap while walks are remembered, so
// an idle front end does not keep old moments alive. The budget's lock is held.
func (w *Walks[P]) arm() {
	if w.armed {
		return
	}
	w.armed = true
	if w.timer == nil {
		w.timer = time.AfterFunc(w.gap(), w.sweep)
		return
	}
	w.timer.Reset(w.gap())
}

// sweep forgets the walks that can no longer be continued.
func (w *Walks[P]) sweep() {
	b := w.lock()
	defer b.mu.Unlock()
	w.armed = false
	now, live := time.Now(), false
	for i := range w.walks {
		if e := &w.walks[i]; e.at != nil {
			if w.expired(e, now) {
				w.drop(e)
			} else {
				live = true
			}
		}
	}
	if live {
		w.arm()
	}
}

// Len is the number of walks remembered (some possibly expired, until
// the next sweep).
func (w *Walks[P]) Len() int {
	b := w.lock()
	defer b.mu.Unlock()
	n := 0
	for i := range w.walks {
		if w.walks[i].at != nil {
			n++
		}
	}
	return n
}

// hash is a seeded 64-bit hash of o; the budget's lock is held.
func (w *Walks[P]) hash(o OID) uint64 {
	if !w.seeded {
		w.seed, w.seeded = maphash.MakeSeed(), true
	}
	var b [4 * 32]byte
	if len(o) <= len(b)/4 { // most OIDs: one call
		for i, a := range o {
			binary.LittleEndian.PutUint32(b[4*i:], a)
		}
		return maphash.Bytes(w.seed, b[:4*len(o)])
	}
	var h maphash.Hash
	h.SetSeed(w.seed)
	for len(o) > 0 {
		n := min(len(o), len(b)/4)
		for i, a := range o[:n] {
			binary.LittleEndian.PutUint32(b[4*i:], a)
		}
		h.Write(b[:4*n])
		o = o[n:]
	}
	return h.Sum64()
}
