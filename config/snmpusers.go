package config

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/usm"
)

// SNMPUser is one SNMPv3 user of the standalone responder: the keys of a
// v3 trap destination, a password either in the file or in a file of its
// own (readable only by the daemon's user), the lowest security level
// answered and the subtrees it may read.
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

// placeholder stands for a password that a file holds, so that the rest
// is validated here; the daemon checks the file's when it reads it.
const placeholder = "password-in-a-file"

// Credentials are u's as usm validates them; passwords in files are
// placeholders.
func (u SNMPUser) Credentials() usm.Credentials {
	c := usm.Credentials{User: u.User, AuthProto: u.AuthProtocol, AuthPass: u.AuthPassword,
		PrivProto: u.PrivProtocol, PrivPass: u.PrivPassword}
	if u.AuthPasswordFile != "" {
		c.AuthPass = placeholder
	}
	if u.PrivPasswordFile != "" {
		c.PrivPass = placeholder
	}
	return c
}

// SecurityLevels are security_level's values, lowest first.
var SecurityLevels = []string{"noAuthNoPriv", "authNoPriv", "authPriv"}

func (s SNMP) checkUsers(bad func(key, format string, args ...any)) {
	seen := map[string]bool{}
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
		c, err := u.Credentials().Norm()
		if err != nil {
			field, msg, _ := strings.Cut(err.Error(), ": ")
			bad(key+"."+field, "%s", msg)
			continue
		}
		if seen[c.User] {
			bad(key+".user", "%q is already another user's name", c.User)
		}
		seen[c.User] = true
		if c.PrivProto == "DES" {
			bad(key+".priv_protocol", "DES is refused (broken); use AES, AES192, AES256, AES192C or AES256C")
		}
		if c.AuthProto == "MD5" && !u.AllowMD5 {
			bad(key+".auth_protocol", "MD5 is refused unless allow_md5 is true; prefer SHA256 or stronger")
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
// security_level, or the highest the passwords allow.
func (u SNMPUser) MinLevel() (int, error) {
	c := u.Credentials()
	has := 0
	if c.AuthPass != "" {
		has = 1
	}
	if c.PrivPass != "" {
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
