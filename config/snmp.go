package config

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
