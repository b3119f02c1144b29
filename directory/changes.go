package directory

import (
	"context"
	"slices"
	"strings"
	"time"
)

// The generation follows the tree's structure part by part (one part per
// top-level context). A part whose source knows when it changes (the DDS
// registry) reports each change itself (Source.Change), so that a supplier
// that registers and leaves between two collections is two changes; the
// other parts are compared when a collection of the hierarchy builds the
// directory (a disk hot-plugged is seen at the daemon's next collection).
// Each change that adds or removes a counted folded path is one
// generation, recorded in the change table.

// MaxChanges bounds the change table (Directory/change): the rows of the
// last MaxChanges paths that appeared or vanished.
const MaxChanges = 1024

// changeRow is one path that appeared or vanished, in generation gen.
type changeRow struct {
	seq   uint32 // the row's number: 1 for the first change since the start
	gen   uint32
	at    time.Time
	added bool
	path  string
}

// partState is what the generation last saw of a part: its counted folded
// context and statistic paths, sorted.
type partState struct {
	layout     uint64 // the part's layout when compared from a snapshot
	ctxs, stat []string
}

// uncounted are the folded paths whose coming and going is no tree
// change: records of what happened, which come and go with each
// evaluation or notification, not what the tree serves. The notification
// log's entries (else logging a tree changed notification would be a
// change of its own), a hotset's feed rows (every crossing) and its
// exceptions.
var uncounted = []string{"NotifLog/", "Hotset/*/feed/*/", "Hotset/*/excp/*/", Name + "/"}

// counted tells whether a folded path counts for the generation.
func counted(path string) bool {
	for _, p := range uncounted {
		if strings.HasPrefix(path, p) {
			return false
		}
	}
	return true
}

// keep returns the counted paths of ps, sorted, without duplicates.
func keep(ps []string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		if counted(p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// setDiff is the paths of y not in x (both sorted).
func setDiff(x, y []string) []string {
	var out []string
	for _, p := range y {
		if _, ok := slices.BinarySearch(x, p); !ok {
			out = append(out, p)
		}
	}
	return out
}

// setPart makes st what the generation knows of part name: a new
// generation when a counted context appeared or vanished (or, when none
// did, a statistic). base (the first sight of the part) is no change.
// Called with mu held; onChange is told in order, under mu.
func (d *Directory) setPart(name string, st partState, base bool) {
	old, had := d.parts[name]
	d.parts[name] = st
	if base || !had && len(st.ctxs)+len(st.stat) == 0 {
		return
	}
	added, removed := setDiff(old.ctxs, st.ctxs), setDiff(st.ctxs, old.ctxs)
	if len(added)+len(removed) == 0 {
		added, removed = setDiff(old.stat, st.stat), setDiff(st.stat, old.stat)
	}
	d.change(added, removed)
}

// change makes a new generation of the paths that appeared and vanished,
// unless there are none. Called with mu held; onChange is told in order,
// under mu.
func (d *Directory) change(added, removed []string) {
	if len(added)+len(removed) == 0 {
		return
	}
	d.bump()
	c := Change{Generation: d.gen, Time: d.changed, Added: added, Removed: removed}
	for _, p := range removed {
		d.record(changeRow{gen: d.gen, at: d.changed, path: p})
	}
	for _, p := range added {
		d.record(changeRow{gen: d.gen, at: d.changed, added: true, path: p})
	}
	d.onChange(c)
}

// bump starts a new generation, keeping the state file's high-water
// mark above it. Called with mu held.
func (d *Directory) bump() {
	d.gen++
	d.changed = d.now()
	if d.store != nil {
		d.store.reach(d.gen)
	}
}

// record adds a row to the change table, dropping the oldest beyond
// MaxChanges. Called with mu held.
func (d *Directory) record(r changeRow) {
	d.seq++
	r.seq = d.seq
	if len(d.changes) == MaxChanges {
		copy(d.changes, d.changes[1:])
		d.changes = d.changes[:MaxChanges-1]
	}
	d.changes = append(d.changes, r)
}

// Source is a part of the tree whose source tells the directory of each
// change of its structure as it happens.
type Source struct {
	d    *Directory
	part string
	set  map[string]struct{} // its counted folded contexts; nil before the first Change
}

// Source makes the top-level context part one whose changes its source
// reports with Change; its snapshots are no longer compared.
func (d *Directory) Source(part string) *Source {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sourced[part] = true
	return &Source{d: d, part: part}
}

// Change tells the directory the part's folded contexts ("DDS/IBM/Test/",
// instances as *) that appeared and vanished: the first call gives every
// context the part starts with, each later one that adds or removes a
// context is a new generation. Calls must come in the order of the
// changes (the source calls it under its own lock); each costs what its
// paths do, not the part's size. It does not block, except that once per
// StoreStep generations it writes the state file.
func (s *Source) Change(added, removed []string) {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	if s.set == nil {
		s.set = map[string]struct{}{}
		for _, p := range added {
			if counted(p) {
				s.set[p] = struct{}{}
			}
		}
		return
	}
	var in, out []string
	for _, p := range removed {
		if _, ok := s.set[p]; ok {
			delete(s.set, p)
			out = append(out, p)
		}
	}
	for _, p := range added {
		if _, ok := s.set[p]; !ok && counted(p) {
			s.set[p] = struct{}{}
			in = append(in, p)
		}
	}
	slices.Sort(in)
	slices.Sort(out)
	s.d.change(in, out)
}

// Look asks the directory to look at the tree now: a source that knows
// when its structure changed but not its paths (an ARM application or
// transaction came or went, a reload) calls it. It does not block; looks
// asked for while one is under way make one more.
func (d *Directory) Look() {
	select {
	case d.look <- struct{}{}:
	default:
	}
}

// Watch looks at the tree after each Look until ctx is done: fresh reads
// the hierarchy again (the daemon's Invalidate then Fresh), then the
// parts that changed are compared, a generation for each.
func (d *Directory) Watch(ctx context.Context, fresh func()) {
	defer d.Flush()
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.look:
		}
		fresh()
		d.update()
	}
}
