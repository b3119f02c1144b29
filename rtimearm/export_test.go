package rtimearm

import (
	"sync/atomic"
	"time"
)

// What the external tests (package rtimearm_test: they use armtest, which
// imports this package) need of the inside.

// HelloSlack is the connections a server accepts beyond MaxProcs.
const HelloSlack = helloSlack

// OpenConns is how many connections s holds.
func OpenConns(s *Server) int { return s.ln.Stats().Open }

// SetNow makes now r's clock.
func SetNow(r *Registry, now func() time.Time) { r.SetClock(now) }

// AppsOfUID is how many applications uid holds in r.
func AppsOfUID(r *Registry, uid uint32) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if u := r.byUID[uid]; u != nil {
		return u.apps
	}
	return 0
}

// Clock is a registry's controllable time (SetNow, or the now of the
// internal tests' registries).
type Clock struct{ ns atomic.Int64 }

func (c *Clock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *Clock) Set(t time.Time)         { c.ns.Store(t.UnixNano()) }
func (c *Clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }
