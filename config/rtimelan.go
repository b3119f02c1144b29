package config

import (
	"strings"
	"time"
)

// RTimeLAN configures the network response time measurement (RTime/LAN).
type RTimeLAN struct {
	Enabled     bool          `mapstructure:"enabled"`
	Interval    time.Duration `mapstructure:"interval"`
	MaxRate     int           `mapstructure:"maxrate"`
	Weight      int           `mapstructure:"weight"`
	Timeout     time.Duration `mapstructure:"timeout"`
	Hosts       []string      `mapstructure:"hosts"`
	ByReference bool          `mapstructure:"by_reference"`
	MaxHosts    int           `mapstructure:"max_hosts"`
	Refuse      []string      `mapstructure:"refuse"`
}

func (r *RTimeLAN) check(bad func(key, format string, args ...any)) {
	if r.Interval < time.Second || r.Interval > time.Hour {
		bad("rtime_lan.interval", "%v is not from 1s to 1h", r.Interval)
	}
	if r.MaxRate < 1 || r.MaxRate > 1000 {
		bad("rtime_lan.maxrate", "%d is not from 1 to 1000 (packets per second)", r.MaxRate)
	}
	if r.Weight < 0 || r.Weight > 99 {
		bad("rtime_lan.weight", "%d is not from 0 to 99 (percent)", r.Weight)
	}
	// The limit keeps sequence numbers of pending requests apart: at most
	// 1000 per second for 60 s is below 65536.
	if r.Timeout < 10*time.Millisecond || r.Timeout > time.Minute {
		bad("rtime_lan.timeout", "%v is not from 10ms to 1m", r.Timeout)
	}
	if r.MaxHosts < 1 || r.MaxHosts > 10000 {
		bad("rtime_lan.max_hosts", "%d is not from 1 to 10000", r.MaxHosts)
	}
	for i := range r.Hosts {
		r.Hosts[i] = strings.TrimSpace(r.Hosts[i])
	}
	for i := range r.Refuse {
		r.Refuse[i] = strings.TrimSpace(r.Refuse[i])
	}
	// The host names and the refused networks are the monitor's to judge
	// (rtimelan.Check, run by daemon.Check).
}
