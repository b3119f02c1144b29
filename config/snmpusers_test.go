package config

import (
	"strings"
	"testing"
)

// snmp.users load; bad settings stop the load naming the key (those usm
// judges: daemon/settings_test.go).
func TestSNMPUsersKeys(t *testing.T) {
	c, err := load(t, "snmp:\n  community: \"\"\n  users:\n    - user: ops\n      auth_protocol: sha512\n      auth_password: abcdefgh\n"+
		"      priv_protocol: aes256c\n      priv_password_file: /etc/subagent/ops.priv\n      security_level: authNoPriv\n      subtrees: [1.3.6.1.4.1.32473.1]\n")
	if err != nil {
		t.Fatal(err)
	}
	if u := c.SNMP.Users; len(u) != 1 || u[0].User != "ops" || u[0].PrivPasswordFile != "/etc/subagent/ops.priv" || len(u[0].Subtrees) != 1 {
		t.Errorf("loaded %+v", u)
	}
	if l, err := c.SNMP.Users[0].MinLevel(); l != 1 || err != nil {
		t.Errorf("minimum level %d, %v", l, err)
	}
	user := "snmp:\n  users:\n    - user: ops\n"
	for key, yaml := range map[string]string{
		"snmp.community":                   "snmp:\n  community: \"\"\n",
		"snmp.users[0].security_level":     user + "      auth_password: abcdefgh\n      security_level: authPriv\n",
		"snmp.users[0].subtrees[0]":        user + "      subtrees: [x.y]\n",
		"snmp.users[0].auth_password_file": user + "      auth_password_file: relative/path\n",
		"snmp.users[0].priv_password_file": user + "      auth_password: abcdefgh\n      priv_password: abcdefgh\n      priv_password_file: /x\n",
	} {
		if _, err := load(t, yaml); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: %v, want an error naming it", key, err)
		}
	}
}
