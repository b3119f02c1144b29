package config

import "github.com/perfagent/subagent/usm"

// SNMPSystem is what the standalone responder serves of the SNMPv2-MIB
// system group (under AgentX, snmpd serves its own). Empty values take
// their defaults where the responder is built: sys_name the host name,
// sys_descr the program, its version and uname. That each is a
// DisplayString is the responder's rule (daemon.Check).
type SNMPSystem struct {
	SysDescr    string `mapstructure:"sys_descr"`
	SysContact  string `mapstructure:"sys_contact"`
	SysName     string `mapstructure:"sys_name"`
	SysLocation string `mapstructure:"sys_location"`
}

// SNMPThrottle bounds, per source address (an IPv6 /64 counts as one),
// the SNMPv3 failures the standalone responder answers: a burst at once,
// then so many a minute (docs/SECURITY.md). Failures are wrong digests,
// unknown users, levels a user lacks and decryption errors; a source
// past them gets no answer at all, even to a right password. Discoveries
// are the unknownEngineIDs Reports every manager's session starts with.
type SNMPThrottle struct {
	FailuresPerMinute    int `mapstructure:"failures_per_minute"`
	FailureBurst         int `mapstructure:"failure_burst"`
	DiscoveriesPerMinute int `mapstructure:"discoveries_per_minute"`
	DiscoveryBurst       int `mapstructure:"discovery_burst"`
	Sources              int `mapstructure:"sources"` // sources remembered, for each of the two
}

// check validates the limits, naming the key at fault.
func (t SNMPThrottle) check(bad func(key, format string, args ...any)) {
	for _, f := range []struct {
		key    string
		v, max int
	}{
		{"snmp.throttle.failures_per_minute", t.FailuresPerMinute, usm.MaxPerMinute},
		{"snmp.throttle.failure_burst", t.FailureBurst, usm.MaxBurst},
		{"snmp.throttle.discoveries_per_minute", t.DiscoveriesPerMinute, usm.MaxPerMinute},
		{"snmp.throttle.discovery_burst", t.DiscoveryBurst, usm.MaxBurst},
	} {
		if f.v < 1 || f.v > f.max {
			bad(f.key, "%d is not from 1 to %d", f.v, f.max)
		}
	}
	if t.Sources < usm.MinSources || t.Sources > usm.MaxSources {
		bad("snmp.throttle.sources", "%d is not from %d to %d", t.Sources, usm.MinSources, usm.MaxSources)
	}
}

// Limits are t as the responder takes them.
func (t SNMPThrottle) Limits() (failures, discoveries usm.Limits) {
	return usm.Limits{PerMinute: t.FailuresPerMinute, Burst: t.FailureBurst, Sources: t.Sources},
		usm.Limits{PerMinute: t.DiscoveriesPerMinute, Burst: t.DiscoveryBurst, Sources: t.Sources}
}
