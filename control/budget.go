package control

import (
	"fmt"
	"sync"

	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/internal/unixsock"
)

// Budget bounds what one user other than the owners can make the daemon
// hold through the control socket, across all its connections; the
// owners are bounded per connection only (docs/SECURITY.md). Zero fields
// take DefaultBudget's.
type Budget struct {
	Hotsets  int   // runtime hotsets at once (control.max_hotsets_per_uid)
	PeerSets int   // peer sets in them (control.max_hotset_peer_sets_per_uid)
	StatSets int   // runtime statsets at once (control.max_statsets_per_uid)
	Bytes    int64 // memory hotsets and statsets may take (control.max_hotset_bytes_per_uid)
}

// DefaultBudget is the budget of configs/subagent.yaml.
var DefaultBudget = Budget{Hotsets: 64, PeerSets: 1024, StatSets: 64, Bytes: 32 << 20}

func (b Budget) withDefaults() Budget {
	if b.Hotsets <= 0 {
		b.Hotsets = DefaultBudget.Hotsets
	}
	if b.PeerSets <= 0 {
		b.PeerSets = DefaultBudget.PeerSets
	}
	if b.StatSets <= 0 {
		b.StatSets = DefaultBudget.StatSets
	}
	if b.Bytes <= 0 {
		b.Bytes = DefaultBudget.Bytes
	}
	return b
}

// returnAfter is what a session must have held for its end to ask for
// memory to be returned to the system (spmi.Hierarchy.ReturnMemory).
const returnAfter = 1 << 20

// users tracks what each user's sessions hold.
type users struct {
	budget Budget
	owners unixsock.Allow

	mu    sync.Mutex
	byUID map[uint32]*user
}

// user is one uid's share: what its sessions hold, and its turn, which
// lets one of its requests run at a time, so that a user with many
// connections takes no more of the processors than one.
type user struct {
	uid    uint32
	exempt bool // an owner: no budget, no turns
	turn   sync.Mutex

	// guarded by users.mu
	sessions int
	held     usage
}

// usage is what is held, or a change of it.
type usage struct {
	hotsets, peerSets, statsets int
	bytes                       int64
}

func (a usage) plus(b usage) usage {
	return usage{a.hotsets + b.hotsets, a.peerSets + b.peerSets, a.statsets + b.statsets, a.bytes + b.bytes}
}

func (a usage) minus(b usage) usage {
	return usage{a.hotsets - b.hotsets, a.peerSets - b.peerSets, a.statsets - b.statsets, a.bytes - b.bytes}
}

func newUsers(b Budget, owners unixsock.Allow) *users {
	return &users{budget: b.withDefaults(), owners: owners, byUID: map[uint32]*user{}}
}

// join counts a session of p's user.
func (us *users) join(p unixsock.Peer) *user {
	us.mu.Lock()
	defer us.mu.Unlock()
	u := us.byUID[p.UID]
	if u == nil {
		u = &user{uid: p.UID, exempt: us.owners.Admits(p)}
		us.byUID[p.UID] = u
	}
	u.sessions++
	return u
}

// leave gives back what a session held and forgets a user without any.
func (us *users) leave(u *user, held usage) {
	us.mu.Lock()
	defer us.mu.Unlock()
	u.held = u.held.minus(held)
	if u.sessions--; u.sessions == 0 {
		delete(us.byUID, u.uid)
	}
}

// overBudget is a refusal for lack of room: the setting that bounds it
// and the error answered, with the guide's code for a failed allocation.
type overBudget struct {
	setting string
	err     *spmierr.Error
}

func refuse(setting, format string, args ...any) *overBudget {
	return &overBudget{setting, &spmierr.Error{Code: spmierr.SiCallocFailed, Msg: fmt.Sprintf(format, args...) + " (" + setting + ")"}}
}

// take charges d to u, or refuses naming the setting it would exceed. A
// decrease is always taken.
func (us *users) take(u *user, d usage) *overBudget {
	us.mu.Lock()
	defer us.mu.Unlock()
	n := u.held.plus(d)
	if !u.exempt {
		b := us.budget
		switch {
		case d.hotsets > 0 && n.hotsets > b.Hotsets:
			return refuse("control.max_hotsets_per_uid", "uid %d holds %d runtime hotsets, the most one user may; free one or close a connection that holds some",
				u.uid, u.held.hotsets)
		case d.peerSets > 0 && n.peerSets > b.PeerSets:
			return refuse("control.max_hotset_peer_sets_per_uid", "uid %d holds %d peer sets in its runtime hotsets, the most one user may; delete some or free a hotset",
				u.uid, u.held.peerSets)
		case d.statsets > 0 && n.statsets > b.StatSets:
			return refuse("control.max_statsets_per_uid", "uid %d holds %d runtime statsets, the most one user may; free one or close a connection that holds some",
				u.uid, u.held.statsets)
		case d.bytes > 0 && n.bytes > b.Bytes:
			return refuse("control.max_hotset_bytes_per_uid", "uid %d's runtime hotsets and statsets would take %s with this, over the %s one user may (they take %s); use fewer statistics or peer sets, a maxresp, or fewer peers",
				u.uid, kib(n.bytes), kib(b.Bytes), kib(u.held.bytes))
		}
	}
	u.held = n
	return nil
}

func kib(b int64) string { return fmt.Sprintf("%d KiB", (b+1023)/1024) }
