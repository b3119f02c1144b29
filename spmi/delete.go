package spmi

import "github.com/perfagent/subagent/client/spmierr"

// Deleter is a Provider whose contexts can be deleted by path: those a
// Creator made on reference (RTime/LAN/<host>), which an operator may
// want gone again.
type Deleter interface {
	Provider
	// Delete is given a path without surrounding slashes. It returns true
	// when it deleted the context (gone from the next collection on), false
	// when the path is not its own, and an error when it is its own but
	// may not be deleted.
	Delete(path string) (bool, error)
}

// Delete deletes the context at path through the provider that owns it;
// the next read no longer sees it.
func (h *Hierarchy) Delete(path string) error {
	provs := h.providers()
	p := spelled(h.cfg.Spell, path)
	for _, pr := range provs {
		d, ok := pr.(Deleter)
		if !ok {
			continue
		}
		done, err := d.Delete(p)
		if err != nil {
			if e, ok := err.(*spmierr.Error); ok {
				return e
			}
			return spmierr.Errorf(spmierr.SiBadArgument, "%s", err.Error())
		}
		if done {
			h.Invalidate()
			return nil
		}
	}
	return spmierr.Errorf(spmierr.SiNotFound, "%q is not a context that can be deleted (only those created by reference, such as RTime/LAN/<host>)", path)
}
