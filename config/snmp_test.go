package config

import (
	"strings"
	"testing"
)

// The system group's keys load from the file and the environment (that
// each is a DisplayString: daemon/settings_test.go).
func TestSNMPSystemKeys(t *testing.T) {
	c, err := load(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if s := c.SNMP.SNMPSystem; s != (SNMPSystem{}) {
		t.Errorf("defaults %+v, want all empty (host name and uname filled in by the responder)", s)
	}
	if _, err := load(t, "snmp:\n  sys_contcat: x\n"); err == nil || !strings.Contains(err.Error(), "sys_contact") {
		t.Errorf("misspelled key: %v", err)
	}
	t.Setenv("SUBAGENT_SNMP_SYS_LOCATION", "rack 4")
	c, err = load(t, "snmp:\n  sys_contact: ops@example.org\n  sys_name: db1\n  sys_descr: \"Payroll database\\r\\nLinux\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := (SNMPSystem{SysDescr: "Payroll database\r\nLinux", SysContact: "ops@example.org", SysName: "db1", SysLocation: "rack 4"}); c.SNMP.SNMPSystem != want {
		t.Errorf("loaded %+v, want %+v", c.SNMP.SNMPSystem, want)
	}
}
