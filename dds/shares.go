package dds

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/internal/unixsock"
)

// Reservation keeps a context name for some users (dds.reserve): a
// vendor's, DDS/<vendor>, or a subtree under one, DDS/<vendor>/<name>...
// Root and the daemon's own user may always use it, as with every allow
// list; anyone else needs to be named. Unreserved names are first come,
// first served.
type Reservation struct {
	Context string // the reserved path, and everything below it
	// ASN is a vendor reservation's enterprise number, which other
	// vendors' suppliers may then not take either (0: not reserved).
	ASN        uint32
	UIDs, GIDs []uint32 // who may register it besides the owners
}

// covers reports whether path is the reserved context or below it.
func (r Reservation) covers(path string) bool {
	return path == r.Context || strings.HasPrefix(path, r.Context+"/")
}

// who names those who may use the reservation, for refusals.
func (r Reservation) who() string {
	s := "root and the daemon's own user"
	if len(r.UIDs) > 0 {
		s += ", uid " + joinIDs(r.UIDs)
	}
	if len(r.GIDs) > 0 {
		s += ", members of gid " + joinIDs(r.GIDs)
	}
	return s
}

func joinIDs(ids []uint32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ", ")
}

// CheckReservations checks dds.reserve: paths under DDS/<vendor>, each
// context and enterprise number reserved once, an ASN only on a vendor.
// Errors name the item (dds.reserve[i]).
func CheckReservations(rs []Reservation) error {
	var errs []error
	paths, asns := map[string]int{}, map[uint32]int{}
	for i, r := range rs {
		key := fmt.Sprintf("dds.reserve[%d]", i)
		parts, err := ddswire.SplitPath(r.Context)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s.context: %s", key, err.(*spmierr.Error).Msg))
			continue
		}
		if j, ok := paths[r.Context]; ok {
			errs = append(errs, fmt.Errorf("%s.context: %s is reserved already by dds.reserve[%d]", key, r.Context, j))
		}
		paths[r.Context] = i
		switch {
		case r.ASN == 0:
		case len(parts) != 2:
			errs = append(errs, fmt.Errorf("%s.asn: %s is not a vendor context (DDS/<vendor>), which alone has an enterprise number", key, r.Context))
		default:
			if j, ok := asns[r.ASN]; ok {
				errs = append(errs, fmt.Errorf("%s.asn: %d is reserved already by dds.reserve[%d]", key, r.ASN, j))
			}
			asns[r.ASN] = i
		}
	}
	return errors.Join(errs...)
}

// reservation is a Reservation with its place in dds.reserve and its
// allow list.
type reservation struct {
	Reservation
	key   string // dds.reserve[i]
	allow unixsock.Allow
}

func newReservations(rs []Reservation) []reservation {
	out := make([]reservation, len(rs))
	for i, r := range rs {
		out[i] = reservation{Reservation: r, key: fmt.Sprintf("dds.reserve[%d]", i),
			allow: unixsock.Owners().With(r.UIDs, r.GIDs)}
	}
	return out
}

// reservedPath refuses p a path that a reservation keeps from it.
func (sh *shares) reservedPath(p unixsock.Peer, what, path string) error {
	for _, r := range sh.reserve {
		if r.covers(path) && !r.allow.Admits(p) {
			return spmierr.Errorf(spmierr.SiDuplicate, "%s: context %s is reserved for %s (%s); uid %d may not register it",
				what, r.Context, r.who(), r.key, p.UID)
		}
	}
	return nil
}

// reservedASN refuses p a vendor enterprise number reserved for another
// vendor name.
func (sh *shares) reservedASN(p unixsock.Peer, v ddswire.Vendor) error {
	for _, r := range sh.reserve {
		if r.ASN != 0 && r.ASN == v.ASN && r.Context != v.Path() && !r.allow.Admits(p) {
			return spmierr.Errorf(spmierr.SiDuplicate, "Init: vendor %s: enterprise number %d is reserved for %s of %s (%s); uid %d may not use it",
				v.Path(), v.ASN, r.Context, r.who(), r.key, p.UID)
		}
	}
	return nil
}

// shares bounds what the suppliers of each local user hold, so that no
// user but the owners (root and the daemon's own user, bounded by the
// totals only) can take every place, and keeps reserved names. Guarded
// by registry.mu.
type shares struct {
	owners   unixsock.Allow
	maxStats int            // statistics of one user's suppliers (0: no bound)
	maxSups  int            // suppliers of one user (0: no bound)
	stats    map[uint32]int // by uid, statistics of the contexts registered
	sups     map[uint32]int // by uid, suppliers registered
	reserve  []reservation
}

func newShares() shares {
	return shares{owners: unixsock.Owners(), stats: map[uint32]int{}, sups: map[uint32]int{}}
}

func (sh *shares) bounded(uid uint32) bool { return !sh.owners.Admits(unixsock.Peer{UID: uid}) }

func (sh *shares) addStats(uid uint32, n int) {
	if sh.stats[uid] += n; sh.stats[uid] == 0 {
		delete(sh.stats, uid)
	}
}

func (sh *shares) addSup(uid uint32, n int) {
	if sh.sups[uid] += n; sh.sups[uid] == 0 {
		delete(sh.sups, uid)
	}
}

// statsRoom refuses uid n more statistics beyond its share.
func (sh *shares) statsRoom(uid uint32, n int, what string) error {
	if sh.maxStats <= 0 || !sh.bounded(uid) {
		return nil
	}
	if used := sh.stats[uid]; used+n > sh.maxStats {
		return spmierr.Errorf(spmierr.SiCallocFailed, "%s: the suppliers of uid %d hold %d statistics; %d more would make %d, above the share of one user, %d (dds.max_stats_per_uid)",
			what, uid, used, n, used+n, sh.maxStats)
	}
	return nil
}

// supRoom refuses uid one more supplier beyond its share.
func (sh *shares) supRoom(uid uint32) error {
	if sh.maxSups <= 0 || !sh.bounded(uid) {
		return nil
	}
	if n := sh.sups[uid]; n >= sh.maxSups {
		return spmierr.Errorf(spmierr.SiCallocFailed, "uid %d has %d suppliers registered, the share of one user (dds.max_suppliers_per_uid)", uid, n)
	}
	return nil
}

// top names the users holding the most in by (at most three), for a
// refusal at a total: who took the room.
func top(by map[uint32]int) string {
	uids := make([]uint32, 0, len(by))
	for uid := range by {
		uids = append(uids, uid)
	}
	sort.Slice(uids, func(i, j int) bool {
		if by[uids[i]] != by[uids[j]] {
			return by[uids[i]] > by[uids[j]]
		}
		return uids[i] < uids[j]
	})
	var s []string
	for _, uid := range uids[:min(3, len(uids))] {
		s = append(s, fmt.Sprintf("uid %d (%d)", uid, by[uid]))
	}
	if len(s) == 0 {
		return ""
	}
	switch n := len(uids) - 3; {
	case n == 1:
		s = append(s, "1 more user")
	case n > 1:
		s = append(s, fmt.Sprintf("%d more users", n))
	}
	return "; held by " + strings.Join(s, ", ")
}
