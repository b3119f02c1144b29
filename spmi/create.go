package spmi

import (
	"errors"
	"time"
)

// Creator is a Provider whose contexts come into being when they are
// referred to by path, as the guide's IP response time contexts do:
// SpmiPathGetCx("RTime/LAN/farvel") creates the context for host farvel.
// A lookup that finds nothing offers the path to every Creator.
type Creator interface {
	Provider
	// Create is given a path that is not in the hierarchy (without
	// surrounding slashes). It returns true when it will add the path's
	// context from the next collection on, false when the path is not its
	// own, and an error when the path is its own but may not be created.
	Create(path string) (bool, error)
}

// createWait bounds how long a lookup that created a context waits for the
// refresh that shows it. A lookup made while the hierarchy is refreshing
// on the same goroutine (a provider reading paths in Collect) cannot see
// that refresh; it gets the old snapshot's answer after this wait.
const createWait = 2 * time.Second

// creator returns the hook a snapshot calls on a lookup miss, or nil when
// no provider is a Creator. Called with h.mu held.
func (h *Hierarchy) creator(provs []Provider) func(*Snapshot, string) (*Node, error) {
	var cs []Creator
	for _, p := range provs {
		if c, ok := p.(Creator); ok {
			cs = append(cs, c)
		}
	}
	if len(cs) == 0 {
		return nil
	}
	return func(s *Snapshot, path string) (*Node, error) {
		p := cleanPath(path)
		created := false
		for _, c := range cs {
			ok, err := c.Create(p)
			if err != nil {
				var se *Error
				if errors.As(err, &se) {
					return nil, se
				}
				return nil, Errorf(SiNotFound, "%s", err.Error())
			}
			created = created || ok
		}
		if !created {
			return nil, notFound(path)
		}
		h.Invalidate()
		// A refresh already running may have collected before the
		// creation: a second one then shows it.
		for range 2 {
			ns := h.FreshWithin(createWait)
			if ns == nil || ns == s {
				break
			}
			if n, err := ns.find(path); err == nil {
				return n, nil
			}
		}
		return nil, Errorf(SiNotFound, "%q is being created; ask again", path)
	}
}

func notFound(path string) error { return Errorf(SiNotFound, "no context or statistic %q", path) }
