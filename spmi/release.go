package spmi

import (
	"fmt"
	"strings"
	"time"

	"github.com/perfagent/subagent/client/spmiwire"
)

// ErrShareFull is wrapped by the error of an assignment refused because
// its owner holds its share of the names (AssignShare); it wraps
// ErrNumberingFull.
var ErrShareFull = fmt.Errorf("%w: share of the names used up", ErrNumberingFull)

// DefaultNameGrace is how long a name whose object is gone keeps its
// number when the configuration does not say (state.name_grace).
const DefaultNameGrace = time.Hour

// SetGrace sets how long a name not seen in the tree keeps its number
// (at least a second).
func (n *Numbering) SetGrace(d time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.grace = max(d, time.Second)
}

// Grace is the grace period in force.
func (n *Numbering) Grace() time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.grace
}

// sweepEvery is how often the hierarchy looks for gone names: a tenth of
// the grace period, from a second to a minute, so that a release is at
// most that late and the look (every context of the tree) stays rare.
func (n *Numbering) sweepEvery() time.Duration {
	return min(max(n.grace/10, time.Second), time.Minute)
}

// SweepDue tells whether a Sweep at now is due.
func (n *Numbering) SweepDue(now time.Time) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.swept.IsZero() || now.Sub(n.swept) >= n.sweepEvery() || now.Before(n.swept)
}

// goneLocked records that name under parent was last seen at unix second at.
func (n *Numbering) goneLocked(parent, name string, at int64) {
	if _, ok := n.m[parent].lookup(name); !ok {
		return
	}
	if n.gone[parent] == nil {
		n.gone[parent] = map[string]int64{}
	}
	if _, had := n.gone[parent][name]; !had {
		n.size += entryLen(name)
	}
	n.gone[parent][name] = at
	n.dirty = true
}

// seenLocked takes name out of its grace period: its object is back.
func (n *Numbering) seenLocked(parent, name string) {
	if _, ok := n.gone[parent][name]; !ok {
		return
	}
	delete(n.gone[parent], name)
	if len(n.gone[parent]) == 0 {
		delete(n.gone, parent)
	}
	n.dirty = true // the size shrinks at the next measure (measureLocked)
}

// Sweep is the life cycle of names: live holds, by parent, the names
// whose objects exist now (the contexts and instances of the tree). A
// name with a record (a row a manager created) or a mark (a host created
// by reference) counts as live: its owner made it to last, and it lasts
// while its part of the tree is off. A name
// not live starts its grace period; one whose grace period has passed is
// released: its number, marks and place in the limits are freed, and a
// later object of that name gets the lowest free number again. It
// returns how many names it released.
func (n *Numbering) Sweep(live map[string]map[string]bool, now time.Time) (released int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.swept = now
	for parent, c := range n.m {
		for name, k := range c.names {
			if live[parent][name] || n.keptLocked(parent, name) {
				n.seenLocked(parent, name)
				continue
			}
			at, ok := n.gone[parent][name]
			if !ok {
				n.goneLocked(parent, name, now.Unix())
				continue
			}
			if now.Sub(time.Unix(at, 0)) >= n.grace {
				n.releaseLocked(parent, c, name, k)
				released++
			}
		}
		if len(c.names) == 0 {
			delete(n.m, parent)
		}
	}
	if released > 0 {
		n.measureLocked()
	}
	return released
}

// measureLocked sets size to what the saved file takes now: the estimate
// only grows between two measures, so that it stays above the file.
func (n *Numbering) measureLocked() {
	if b, err := n.encodeLocked(); err == nil {
		n.size = len(b)
	}
}

// shareMark prefixes the marks of AssignShare's owners: they count names,
// they do not keep them.
const shareMark = "share "

// keptLocked tells whether name has a record or a mark other than an
// owner's share.
func (n *Numbering) keptLocked(parent, name string) bool {
	if n.recs[parent][name] != "" {
		return true
	}
	for mark, set := range n.marks[parent] {
		if set[name] && !strings.HasPrefix(mark, shareMark) {
			return true
		}
	}
	return false
}

// Share lists the names under parent counted against owner's share
// (AssignShare), sorted.
func (n *Numbering) Share(parent, owner string) []string {
	return n.Marked(parent, shareMark+owner)
}

// releaseLocked forgets name and what the numbering keeps with it.
func (n *Numbering) releaseLocked(parent string, c *numbered, name string, k uint32) {
	n.seenLocked(parent, name)
	delete(c.names, name)
	delete(c.used, k)
	c.floor = min(c.floor, k)
	for _, set := range n.marks[parent] {
		delete(set, name)
	}
	n.dirty = true
}

// Room tells whether name under parent has or may get a number: nil, or
// an error wrapping ErrNumberingFull that names the limit. It assigns
// nothing: callers that must refuse a request before anything changes
// (an SNMP SET's test) ask it first.
func (n *Numbering) Room(parent, name string) error { return n.RoomFor(parent, name) }

// RoomFor is Room for several names together: those without a number
// all fit, or the error names the first that does not.
func (n *Numbering) RoomFor(parent string, names ...string) error {
	parent = spmiwire.CleanPath(parent)
	n.mu.Lock()
	defer n.mu.Unlock()
	c := n.m[parent]
	held, size := 0, n.size
	if c != nil {
		held = len(c.names)
	}
	seen := map[string]bool{}
	for _, name := range names {
		if _, ok := c.lookup(name); ok || seen[name] {
			continue
		}
		seen[name] = true
		if held >= n.max {
			return fmt.Errorf("%w: cannot number %s/%s: %s would have more than %d names with numbers, the limit (state.max_names_per_context); names whose objects are gone are released after state.name_grace",
				ErrNumberingFull, parent, name, parent, n.max)
		}
		if size += entryLen(name); size+jsonLen(parent)+16 > maxFileBytes {
			return n.roomLocked(parent, name) // its error names the file's bound
		}
		held++
	}
	return nil
}

// AssignShare is Assign for a name counted against owner's share of
// parent: at most share names (in the tree or in their grace period)
// carry owner's mark, so one owner cannot take every number of parent.
// key names the share's setting in the error. A name already numbered
// keeps its number whoever asks, and counts for its first owner.
func (n *Numbering) AssignShare(parent, name string, taken func(uint32) bool, owner string, share int, key string) (uint32, error) {
	parent = spmiwire.CleanPath(parent)
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.m[parent].lookup(name); !ok {
		if held := len(n.marks[parent][shareMark+owner]); held >= share {
			return 0, fmt.Errorf("%w: cannot number %s/%s: %s holds %d names of %s, the limit (%s); names whose objects are gone are released after state.name_grace",
				ErrShareFull, parent, name, owner, held, parent, key)
		}
	}
	k, fresh, err := n.assignLocked(parent, name, taken)
	if err == nil && fresh {
		n.markLocked(parent, shareMark+owner, name, true)
	}
	return k, err
}
