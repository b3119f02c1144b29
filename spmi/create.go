package spmi

import (
	"errors"
	"time"

	"github.com/perfagent/subagent/client/spmierr"
)

// Creator is a Provider whose contexts come into being when they are
// named, as the guide's IP response time contexts do: SpmiPathGetCx
// ("RTime/LAN/farvel") creates the context for host farvel. Here creation
// is its own operation (Hierarchy.Create), never a side effect of a read:
// whoever may read need not be allowed to make the daemon do more work.
type Creator interface {
	Provider
	// Create is given a path that is not in the hierarchy (without
	// surrounding slashes). It returns true when it will add the path's
	// context from the next collection on, false when the path is not its
	// own, and an error when the path is its own but may not be created.
	Create(path string) (bool, error)
}

// createWait bounds how long Create waits for the refresh that shows the
// new context.
const createWait = 2 * time.Second

// Create makes the context that path names (or that a statistic path
// lies in) through the provider that owns such paths, and returns its
// node once a refresh shows it. A path that exists already is returned
// as it is.
func (h *Hierarchy) Create(path string) (*Node, error) {
	s := h.Fresh()
	if n, err := s.Lookup(path); err == nil {
		return n, nil
	}
	provs := h.providers()
	p := s.clean(path)
	created := false
	for _, pr := range provs {
		c, ok := pr.(Creator)
		if !ok {
			continue
		}
		ok, err := c.Create(p)
		if err != nil {
			var se *spmierr.Error
			if errors.As(err, &se) {
				return nil, se
			}
			return nil, spmierr.Errorf(spmierr.SiBadArgument, "%s", err.Error())
		}
		created = created || ok
	}
	if !created {
		return nil, spmierr.Errorf(spmierr.SiNotFound, "no context or statistic %q, and none can be created there", path)
	}
	h.Invalidate()
	// A refresh already running may have collected before the creation: a
	// second one then shows it.
	for range 2 {
		ns := h.FreshWithin(createWait)
		if ns == nil || ns == s {
			break
		}
		if n, err := ns.Lookup(path); err == nil {
			return n, nil
		}
		s = ns
	}
	return nil, spmierr.Errorf(spmierr.SiNotFound, "%q is being created; ask again", path)
}

func notFound(path string) error {
	return spmierr.Errorf(spmierr.SiNotFound, "no context or statistic %q", path)
}
