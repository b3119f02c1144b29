package daemon

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/perfagent/subagent/config"
)

// Reloader is a part of the daemon that takes new settings on SIGHUP.
// Check validates them without applying anything; Apply is called only
// when every part's Check passed, so a bad reload changes nothing. An
// error from Apply says what of the part's settings it could not apply
// (and what runs instead): the reload then names the part's changed keys
// as not applied, never as changed.
type Reloader struct {
	Name  string
	Check func(*config.Config) error
	Apply func(*config.Config) error
}

// Reloader names of parts that tests register too.
const (
	PartResponder = "responder"
	PartLog       = "log"
)

// reloadable is the one list of settings a SIGHUP applies, each with the
// part (Reloader.Name) that applies it. A key covers its section and its
// list items ("traps" covers traps[0].community). Every other key needs a
// restart: a reload that changes one says so, naming it.
var reloadable = []struct{ key, part string }{
	{"snmp.community", PartResponder},
	{"snmp.max_repetitions", PartResponder},
	{"snmp.max_msg_size", PartResponder},
	{"snmp.sys_descr", PartResponder},
	{"snmp.sys_contact", PartResponder},
	{"snmp.sys_name", PartResponder},
	{"snmp.sys_location", PartResponder},
	{"snmp.users", PartResponder},
	{"log.level", PartLog},
	{"hotset", "hotsets"},
	{"hotsets", "hotsets"},
	{"traps", "hotsets"},
	{"expressions", "expressions"},
	{"derived", "expressions"},
	{"alarms", "expressions"},
	{"arm.weight", "arm"},
	{"slo.max_snmp_objectives", "objectives"},
	{"objectives", "objectives"},
	{"slo", "slo_alarms"},
	{"rtime_lan.interval", "rtime_lan"},
	{"rtime_lan.maxrate", "rtime_lan"},
	{"rtime_lan.weight", "rtime_lan"},
	{"rtime_lan.timeout", "rtime_lan"},
	{"rtime_lan.hosts", "rtime_lan"},
	{"rtime_lan.by_reference", "rtime_lan"},
	{"rtime_lan.max_hosts", "rtime_lan"},
	{"rtime_lan.refuse", "rtime_lan"},
}

// reloadPart is the part that applies key on reload, "" when key needs a
// restart.
func reloadPart(key string) string {
	for _, r := range reloadable {
		if key == r.key || strings.HasPrefix(key, r.key+".") || strings.HasPrefix(key, r.key+"[") {
			return r.part
		}
	}
	return ""
}

// addReloader registers a part to reload. Call it before Run.
func (d *Daemon) addReloader(r Reloader) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.reloaders = append(d.reloaders, r)
}

// Reload applies c to every reloadable part, or to none of them: the
// error names each part that refused it, and the running settings stay.
// Settings that need a restart and differ from the running ones are named
// in a warning.
func (d *Daemon) Reload(c *config.Config) error {
	d.reloading.Lock() // one at a time: a part's Apply takes what its Check prepared
	defer d.reloading.Unlock()
	d.traps.Lock() // no row made at run time takes a trap number between Check and Apply
	defer d.traps.Unlock()
	d.mu.Lock()
	rs := append([]Reloader(nil), d.reloaders...)
	start, last := d.loaded, d.applied
	d.mu.Unlock()
	if start == nil {
		start = d.cfg
	}
	if last == nil {
		last = start
	}
	// The domain packages' rules first (Check): a reload refuses what a
	// start would, whoever loaded c.
	var errs []error
	if err := Check(c); err != nil {
		errs = append(errs, err)
	}
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
	parts := map[string]bool{}
	failed := map[string]error{}
	var names []string
	for _, r := range rs {
		if r.Apply != nil {
			if err := r.Apply(c); err != nil {
				failed[r.Name] = err
			}
		}
		parts[r.Name] = true
		names = append(names, r.Name)
	}
	if d.dir != nil {
		d.dir.Look() // hotsets or hosts the reload added: a tree change
	}
	d.mu.Lock()
	d.applied = c
	d.mu.Unlock()

	// Applied: the reloadable keys changed since the last reload. Restart:
	// the others that differ from the settings the daemon started with,
	// every time, since they still do not hold.
	var applied, unused, restart, notApplied []string
	for _, k := range changedKeys(last, c) {
		switch p := reloadPart(k); {
		case p == "":
		case failed[p] != nil:
			notApplied = append(notApplied, k)
		case parts[p]:
			applied = append(applied, k)
		default:
			unused = append(unused, k) // its part is off: nothing to apply
		}
	}
	for _, k := range changedKeys(start, c) {
		if reloadPart(k) == "" {
			restart = append(restart, k)
		}
	}
	attrs := []any{"config", c.File, "parts", strings.Join(names, ","), "changed", strings.Join(applied, ",")}
	if len(unused) > 0 {
		attrs = append(attrs, "unused", strings.Join(unused, ","))
	}
	d.log.Info("reloaded", attrs...)
	if len(restart) > 0 {
		d.log.Warn("reload: these settings need a restart to take effect", "keys", strings.Join(restart, ","))
	}
	errs = nil
	for _, r := range rs {
		if err := failed[r.Name]; err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.Name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		d.log.Error("reload: settings not applied", "keys", strings.Join(notApplied, ","), "err", err)
		return err
	}
	return nil
}

// changedKeys lists the keys (as in the configuration file) whose values
// differ between a and b, found by walking Config so that no new key can
// be forgotten. Lists of sections are compared item by item when their
// lengths agree; other lists as a whole. Nil a or b: nothing.
func changedKeys(a, b *config.Config) []string {
	if a == nil || b == nil {
		return nil
	}
	var out []string
	diffValues("", reflect.ValueOf(*a), reflect.ValueOf(*b), &out)
	return out
}

func diffValues(key string, a, b reflect.Value, out *[]string) {
	switch {
	case a.Kind() == reflect.Struct:
		t := a.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("mapstructure")
			if tag == "-" || !f.IsExported() {
				continue // computed (Base, File)
			}
			name, opts, _ := strings.Cut(tag, ",")
			sub := key
			if opts != "squash" {
				if name == "" {
					name = strings.ToLower(f.Name)
				}
				if sub != "" {
					sub += "."
				}
				sub += name
			}
			diffValues(sub, a.Field(i), b.Field(i), out)
		}
	case a.Kind() == reflect.Slice && a.Len() == 0 && b.Len() == 0:
		// nil and empty are the same setting
	case a.Kind() == reflect.Slice && a.Type().Elem().Kind() == reflect.Struct && a.Len() == b.Len():
		for i := range a.Len() {
			diffValues(fmt.Sprintf("%s[%d]", key, i), a.Index(i), b.Index(i), out)
		}
	default:
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			*out = append(*out, key)
		}
	}
}
