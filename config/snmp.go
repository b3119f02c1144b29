package config

import "github.com/perfagent/subagent/responder"

// SNMPSystem is what the standalone responder serves of the SNMPv2-MIB
// system group (under AgentX, snmpd serves its own). Empty values take
// their defaults where the responder is built: sys_name the host name,
// sys_descr the program, its version and uname.
type SNMPSystem struct {
	SysDescr    string `mapstructure:"sys_descr"`
	SysContact  string `mapstructure:"sys_contact"`
	SysName     string `mapstructure:"sys_name"`
	SysLocation string `mapstructure:"sys_location"`
}

func (s SNMPSystem) check(bad func(key, format string, args ...any)) {
	for _, f := range []struct{ key, v string }{
		{"snmp.sys_descr", s.SysDescr}, {"snmp.sys_contact", s.SysContact},
		{"snmp.sys_name", s.SysName}, {"snmp.sys_location", s.SysLocation},
	} {
		if err := responder.CheckDisplayString(f.v); err != nil {
			bad(f.key, "%v (a DisplayString: at most 255 bytes of text)", err)
		}
	}
}
