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
	CheckRanges(bad,
		Range{Key: "snmp.throttle.failures_per_minute", V: t.FailuresPerMinute, Min: 1, Max: usm.MaxPerMinute},
		Range{Key: "snmp.throttle.failure_burst", V: t.FailureBurst, Min: 1, Max: usm.MaxBurst},
		Range{Key: "snmp.throttle.discoveries_per_minute", V: t.DiscoveriesPerMinute, Min: 1, Max: usm.MaxPerMinute},
		Range{Key: "snmp.throttle.discovery_burst", V: t.DiscoveryBurst, Min: 1, Max: usm.MaxBurst},
		Range{Key: "snmp.throttle.sources", V: t.Sources, Min: usm.MinSources, Max: usm.MaxSources})
}

// Range is a whole-number setting, its value and its bounds.
type Range struct {
	Key         string
	V, Min, Max int
}

// CheckRanges tells bad of each value outside its bounds.
func CheckRanges(bad func(key, format string, args ...any), rs ...Range) {
	for _, r := range rs {
		if r.V < r.Min || r.V > r.Max {
			bad(r.Key, "%d is not from %d to %d", r.V, r.Min, r.Max)
		}
	}
}

// Limits are t as the responder takes them.
func (t SNMPThrottle) Limits() (failures, discoveries usm.Limits) {
	return usm.Limits{PerMinute: t.FailuresPerMinute, Burst: t.FailureBurst, Sources: t.Sources},
		usm.Limits{PerMinute: t.DiscoveriesPerMinute, Burst: t.DiscoveryBurst, Sources: t.Sources}
}
