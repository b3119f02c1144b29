package daemon

import (
	"errors"
	"fmt"

	"github.com/perfagent/subagent/config"
)

// Reloader is a part of the daemon that takes new settings on SIGHUP.
// Check validates them without applying anything; Apply is called only
// when every part's Check passed, so a bad reload changes nothing.
type Reloader struct {
	Name  string
	Check func(*config.Config) error
	Apply func(*config.Config)
}

// AddReloader registers a part to reload. Call it before Run.
func (d *Daemon) AddReloader(r Reloader) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.reloaders = append(d.reloaders, r)
}

// Reload applies c to every reloadable part, or to none of them: the
// error names each part that refused it, and the running settings stay.
func (d *Daemon) Reload(c *config.Config) error {
	d.mu.Lock()
	rs := append([]Reloader(nil), d.reloaders...)
	d.mu.Unlock()
	var errs []error
	for _, r := range rs {
		if r.Check == nil {
			continue
		}
		if err := r.Check(c); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.Name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		d.log.Error("reload refused; the running settings stay", "err", err)
		return err
	}
	for _, r := range rs {
		if r.Apply != nil {
			r.Apply(c)
		}
	}
	d.log.Info("reloaded", "config", c.File, "parts", len(rs))
	return nil
}
