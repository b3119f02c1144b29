package config

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"time"
)

// ObjectiveConf is one service level objective of ARM transactions
// (package slo; docs/ARM.md, "Service levels").
type ObjectiveConf struct {
	Name        string        `mapstructure:"name"`
	Application string        `mapstructure:"application"` // pattern of application keys (* ? [..])
	Transaction string        `mapstructure:"transaction"` // pattern of transaction keys
	Threshold   time.Duration `mapstructure:"threshold"`   // 0 or absent: availability
	Target      float64       `mapstructure:"target"`      // ratio of good completions, 0.5 to 0.99999
	Window      time.Duration `mapstructure:"window"`      // 1h to 2160h
}

// SLOSettings configure the objectives' burn-rate alarms.
type SLOSettings struct {
	Interval time.Duration `mapstructure:"interval"` // between two evaluations of the alarms
	Page     BurnAlarm     `mapstructure:"page"`
	Ticket   BurnAlarm     `mapstructure:"ticket"`
	// MaxSNMPObjectives bounds the objectives created in sloDefTable and
	// through the control socket together.
	MaxSNMPObjectives int `mapstructure:"max_snmp_objectives"`
}

// BurnAlarm is a multi-window burn-rate alarm: raised when the burn rate
// over both windows reaches factor.
type BurnAlarm struct {
	Factor float64       `mapstructure:"factor"`
	Long   time.Duration `mapstructure:"long"`
	Short  time.Duration `mapstructure:"short"`
}

// Bounds of the objectives (slo.MaxObjectives, slo.FineSpan, slo.MaxSpan).
const (
	maxObjectives = 1024
	fineSpan      = 72 * time.Hour
	maxSpan       = 90 * 24 * time.Hour
)

// checkObjectives checks the objectives; a pattern is checked as
// path.Match reads it.
func (c *Config) checkObjectives(bad func(key, format string, args ...any)) {
	if iv := c.SLO.Interval; iv < time.Second || iv > 5*time.Minute {
		bad("slo.interval", "%v is not from 1s to 5m", iv)
	}
	for _, a := range []struct {
		key string
		a   BurnAlarm
	}{{"slo.page", c.SLO.Page}, {"slo.ticket", c.SLO.Ticket}} {
		if !(a.a.Factor >= 1 && a.a.Factor <= 1000) {
			bad(a.key+".factor", "%v is not from 1 to 1000", a.a.Factor)
		}
		for _, w := range []struct {
			key string
			v   time.Duration
		}{{".long", a.a.Long}, {".short", a.a.Short}} {
			if w.v < time.Minute || w.v > fineSpan || w.v%time.Minute != 0 {
				bad(a.key+w.key, "%v is not whole minutes from 1m to 72h", w.v)
			}
		}
		if a.a.Short >= a.a.Long {
			bad(a.key+".short", "%v is not shorter than %s.long (%v)", a.a.Short, a.key, a.a.Long)
		}
	}
	if n := c.SLO.MaxSNMPObjectives; n < 0 || n > maxObjectives {
		bad("slo.max_snmp_objectives", "%d is not from 0 to %d", n, maxObjectives)
	}
	if n := len(c.Objectives); n > maxObjectives {
		bad("objectives", "%d objectives, more than %d", n, maxObjectives)
	}
	seen := map[string]int{}
	for i, o := range c.Objectives {
		key := fmt.Sprintf("objectives[%d]", i)
		switch {
		case o.Name == "" || len(o.Name) > 31 || strings.ContainsAny(o.Name, nameForbidden):
			bad(key+".name", "%q is not a name of 1 to 31 bytes without blanks, /, \\ or pattern characters", o.Name)
		case seen[o.Name] > 0:
			bad(key+".name", "%q is already objectives[%d]'s", o.Name, seen[o.Name]-1)
		default:
			seen[o.Name] = i + 1
		}
		checkObjective(key, o, bad)
	}
}

// CheckObjective checks one objective as the configuration file's are:
// the one place for the objectives created over SNMP and the control
// socket too. from names it in the error.
func CheckObjective(from string, o ObjectiveConf) error {
	var errs []error
	if o.Name == "" || len(o.Name) > 31 || strings.ContainsAny(o.Name, nameForbidden) {
		errs = append(errs, fmt.Errorf("%s.name: %q is not a name of 1 to 31 bytes without blanks, /, \\ or pattern characters", from, o.Name))
	}
	checkObjective(from, o, func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	})
	return errors.Join(errs...)
}

// nameForbidden are the bytes an objective's name may not hold.
const nameForbidden = "/ \t\n\x00*?[]\\"

// checkObjective checks an objective's patterns, threshold, target and
// window.
func checkObjective(key string, o ObjectiveConf, bad func(key, format string, args ...any)) {
	for _, p := range []struct{ k, v string }{{"application", o.Application}, {"transaction", o.Transaction}} {
		if _, err := path.Match(p.v, ""); p.v == "" || len(p.v) > 255 || err != nil {
			bad(key+"."+p.k, "%q is not a pattern of 1 to 255 bytes (* ? [...] as in shell patterns)", p.v)
		}
	}
	if o.Threshold < 0 || (o.Threshold > 0 && o.Threshold < time.Microsecond) || o.Threshold > time.Hour {
		bad(key+".threshold", "%v is not from 1us to 1h (0 or absent: availability)", o.Threshold)
	}
	if !(o.Target >= 0.5 && o.Target <= 0.99999) {
		bad(key+".target", "%v is not a ratio from 0.5 to 0.99999 (0.999 is 99.9 %%)", o.Target)
	}
	w := o.Window
	switch {
	case w < time.Hour || w > maxSpan:
		bad(key+".window", "%v is not from 1h to 2160h (90 days)", w)
	case w <= fineSpan && w%time.Minute != 0:
		bad(key+".window", "%v is not whole minutes (the buckets of windows up to 72h)", w)
	case w > fineSpan && w%time.Hour != 0:
		bad(key+".window", "%v is not whole hours (the buckets of windows beyond 72h)", w)
	}
}
