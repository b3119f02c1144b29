package config

import (
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

// Bounds of the objectives (slo.MaxObjectives, slo.FineSpan, slo.MaxSpan).
const (
	maxObjectives = 1024
	fineSpan      = 72 * time.Hour
	maxSpan       = 90 * 24 * time.Hour
)

// checkObjectives checks the objectives; a pattern is checked as
// path.Match reads it.
func (c *Config) checkObjectives(bad func(key, format string, args ...any)) {
	if n := len(c.Objectives); n > maxObjectives {
		bad("objectives", "%d objectives, more than %d", n, maxObjectives)
	}
	seen := map[string]int{}
	for i, o := range c.Objectives {
		key := fmt.Sprintf("objectives[%d]", i)
		switch {
		case o.Name == "" || len(o.Name) > 31 || strings.ContainsAny(o.Name, "/ \t\n\x00*?[]\\"):
			bad(key+".name", "%q is not a name of 1 to 31 bytes without blanks, /, \\ or pattern characters", o.Name)
		case seen[o.Name] > 0:
			bad(key+".name", "%q is already objectives[%d]'s", o.Name, seen[o.Name]-1)
		default:
			seen[o.Name] = i + 1
		}
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
}
