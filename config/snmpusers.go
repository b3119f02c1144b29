package config

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/perfagent/subagent/asn1tree"
)

// SNMPUser is one SNMPv3 user of the standalone responder: the keys of a
// v3 trap destination, a password either in the file or in a file of its
// own (readable only by the daemon's user), the lowest security level
// answered and the subtrees it may read. The names, protocols and
// passwords are usm's to judge (daemon.Check).
type SNMPUser struct {
	User             string   `mapstructure:"user"`
	AuthProtocol     string   `mapstructure:"auth_protocol"`
	AuthPassword     string   `mapstructure:"auth_password"`
	AuthPasswordFile string   `mapstructure:"auth_password_file"`
	PrivProtocol     string   `mapstructure:"priv_protocol"`
	PrivPassword     string   `mapstructure:"priv_password"`
	PrivPasswordFile string   `mapstructure:"priv_password_file"`
	SecurityLevel    string   `mapstructure:"security_level"` // minimum: noAuthNoPriv, authNoPriv, authPriv; "" the highest the passwords allow
	Subtrees         []string `mapstructure:"subtrees"`       // dotted OIDs; none: everything served
	AllowMD5         bool     `mapstructure:"allow_md5"`      // HMAC-MD5 is refused without it
}

// SecurityLevels are security_level's values, lowest first.
var SecurityLevels = []string{"noAuthNoPriv", "authNoPriv", "authPriv"}

func (s SNMP) checkUsers(bad func(key, format string, args ...any)) {
	for i, u := range s.Users {
		key := fmt.Sprintf("snmp.users[%d]", i)
		for _, p := range []struct{ name, pass, file string }{
			{"auth_password", u.AuthPassword, u.AuthPasswordFile}, {"priv_password", u.PrivPassword, u.PrivPasswordFile}} {
			if p.pass != "" && p.file != "" {
				bad(key+"."+p.name+"_file", "set with %s: give the password once", p.name)
			}
			if p.file != "" && !filepath.IsAbs(p.file) {
				bad(key+"."+p.name+"_file", "%q is not an absolute path", p.file)
			}
		}
		if _, err := u.MinLevel(); err != nil {
			bad(key+".security_level", "%v", err)
		}
		for j, o := range u.Subtrees {
			if _, err := asn1tree.Parse(o); err != nil {
				bad(fmt.Sprintf("%s.subtrees[%d]", key, j), "%v", err)
			}
		}
	}
}

// MinLevel is the index in SecurityLevels of the lowest level answered:
// security_level, or the highest the passwords (given or in files) allow.
func (u SNMPUser) MinLevel() (int, error) {
	has := 0
	if u.AuthPassword != "" || u.AuthPasswordFile != "" {
		has = 1
	}
	if u.PrivPassword != "" || u.PrivPasswordFile != "" {
		has = 2
	}
	if u.SecurityLevel == "" {
		return has, nil
	}
	for i, l := range SecurityLevels {
		if strings.EqualFold(l, u.SecurityLevel) {
			if i > has {
				return 0, fmt.Errorf("%s needs the passwords for it", l)
			}
			return i, nil
		}
	}
	return 0, fmt.Errorf("%q is not one of %s", u.SecurityLevel, strings.Join(SecurityLevels, ", "))
}
