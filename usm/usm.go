// Package usm owns SNMPv3 User-based Security Model credentials (RFC 3414):
// the names of the protocols, the validation of a user's settings (shared
// by trap destinations and the standalone responder's users) and key
// localization.
//
// Keys are localized with gosnmp's UsmSecurityParameters.InitSecurityKeys,
// which implements RFC 3414 A.2 for MD5, SHA-1 and the SHA-2 family of
// RFC 7860, and the AES-192/256 key extensions: AES192/AES256 are
// Blumenthal's (draft-blumenthal-aes-usm-04, net-snmp's AES-192/AES-256),
// AES192C/AES256C are Reeder's (draft-reeder-snmpv3-usm-3desede, Cisco,
// net-snmp's AES-192-C/AES-256-C, pysnmp's usmAesCfb192/256Protocol).
// The tests check it against the RFCs' and the drafts' vectors.
package usm

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"strings"

	"github.com/gosnmp/gosnmp"
)

// MaxBoots is snmpEngineBoots' upper bound (RFC 3414 2.2.2): there it
// stays, and every authenticated message is out of the time window.
const MaxBoots = 2147483647

// Auth is an authentication protocol: its digest and how many octets of
// the HMAC go on the wire (RFC 3414 6, 7; RFC 7860 4.2).
type Auth struct {
	Name  string
	New   func() hash.Hash
	Trunc int // octets of msgAuthenticationParameters
	Proto gosnmp.SnmpV3AuthProtocol
}

// Priv is a privacy protocol and the length of its key.
type Priv struct {
	Name   string
	KeyLen int
	Proto  gosnmp.SnmpV3PrivProtocol
}

// The protocols by their configuration names (gosnmp's, upper case).
var (
	Auths = []Auth{
		{"MD5", md5.New, 12, gosnmp.MD5},
		{"SHA", sha1.New, 12, gosnmp.SHA},
		{"SHA224", sha256.New224, 16, gosnmp.SHA224},
		{"SHA256", sha256.New, 24, gosnmp.SHA256},
		{"SHA384", sha512.New384, 32, gosnmp.SHA384},
		{"SHA512", sha512.New, 48, gosnmp.SHA512},
	}
	Privs = []Priv{
		{"DES", 16, gosnmp.DES},
		{"AES", 16, gosnmp.AES},
		{"AES192", 24, gosnmp.AES192},
		{"AES256", 32, gosnmp.AES256},
		{"AES192C", 24, gosnmp.AES192C},
		{"AES256C", 32, gosnmp.AES256C},
	}
)

// FindAuth and FindPriv look a protocol up by name, case-insensitively.
func FindAuth(name string) (Auth, bool) {
	for _, a := range Auths {
		if strings.EqualFold(a.Name, name) {
			return a, true
		}
	}
	return Auth{}, false
}

func FindPriv(name string) (Priv, bool) {
	for _, p := range Privs {
		if strings.EqualFold(p.Name, name) {
			return p, true
		}
	}
	return Priv{}, false
}

func authNames() string {
	n := make([]string, len(Auths))
	for i, a := range Auths {
		n[i] = a.Name
	}
	return strings.Join(n, ", ")
}

func privNames() string {
	n := make([]string, len(Privs))
	for i, p := range Privs {
		n[i] = p.Name
	}
	return strings.Join(n, ", ")
}

// MinPassword is the shortest passphrase accepted (RFC 3414 11.2; net-snmp
// refuses shorter ones too).
const MinPassword = 8

// Credentials are one user's settings as configured. The level follows
// from the passwords given: both make authPriv, only AuthPass authNoPriv.
type Credentials struct {
	User      string
	AuthProto string // Auths' names; empty with AuthPass: SHA
	AuthPass  string
	PrivProto string // Privs' names; empty with PrivPass: AES
	PrivPass  string
}

// Norm validates c and returns it with the protocols' names in upper case
// and defaulted; the error starts with the key at fault (user,
// auth_protocol, auth_password, priv_protocol, priv_password) and a colon.
func (c Credentials) Norm() (Credentials, error) {
	if c.User == "" {
		return c, errors.New("user: must not be empty for v3")
	}
	if len(c.User) > 32 { // SnmpAdminString (SIZE(1..32)) in usmUserName
		return c, fmt.Errorf("user: %q is longer than 32 bytes", c.User)
	}
	// A protocol without its password would silently work with less
	// security than configured.
	if c.AuthProto != "" && c.AuthPass == "" {
		return c, fmt.Errorf("auth_password: must be set with auth_protocol %s", c.AuthProto)
	}
	if c.PrivProto != "" && c.PrivPass == "" {
		return c, fmt.Errorf("priv_password: must be set with priv_protocol %s", c.PrivProto)
	}
	if c.PrivPass != "" && c.AuthPass == "" {
		return c, errors.New("priv_password: privacy needs authentication (auth_password)")
	}
	for _, p := range []struct{ key, pass string }{{"auth_password", c.AuthPass}, {"priv_password", c.PrivPass}} {
		if p.pass != "" && len(p.pass) < MinPassword {
			return c, fmt.Errorf("%s: at least %d characters (RFC 3414)", p.key, MinPassword)
		}
	}
	if c.AuthPass != "" {
		if c.AuthProto == "" {
			c.AuthProto = "SHA"
		}
		a, ok := FindAuth(c.AuthProto)
		if !ok {
			return c, fmt.Errorf("auth_protocol: %q is not one of %s", c.AuthProto, authNames())
		}
		c.AuthProto = a.Name
	}
	if c.PrivPass != "" {
		if c.PrivProto == "" {
			c.PrivProto = "AES"
		}
		p, ok := FindPriv(c.PrivProto)
		if !ok {
			return c, fmt.Errorf("priv_protocol: %q is not one of %s", c.PrivProto, privNames())
		}
		c.PrivProto = p.Name
	}
	return c, nil
}

// Keys are a user's keys localized to one engine ID. Never log them.
type Keys struct {
	Auth    Auth
	AuthKey []byte // nil: noAuthNoPriv
	Priv    Priv
	PrivKey []byte // nil: no privacy; else exactly Priv.KeyLen octets
}

// Localize computes c's keys for engineID (RFC 3414 A.2, with the AES
// key extensions above). c must have passed Norm.
func Localize(c Credentials, engineID []byte) (Keys, error) {
	var k Keys
	if c.AuthPass == "" {
		return k, nil
	}
	a, ok := FindAuth(c.AuthProto)
	if !ok {
		return k, fmt.Errorf("auth_protocol: %q is not one of %s", c.AuthProto, authNames())
	}
	sp := gosnmp.UsmSecurityParameters{
		AuthoritativeEngineID:    string(engineID),
		AuthenticationProtocol:   a.Proto,
		AuthenticationPassphrase: c.AuthPass,
		PrivacyProtocol:          gosnmp.NoPriv,
		Logger:                   gosnmp.NewLogger(nil),
	}
	var p Priv
	if c.PrivPass != "" {
		if p, ok = FindPriv(c.PrivProto); !ok {
			return k, fmt.Errorf("priv_protocol: %q is not one of %s", c.PrivProto, privNames())
		}
		sp.PrivacyProtocol, sp.PrivacyPassphrase = p.Proto, c.PrivPass
	}
	if err := sp.InitSecurityKeys(); err != nil {
		return k, err
	}
	// gosnmp's hMAC swallows errors (an empty key, nil error): check.
	if len(sp.SecretKey) != a.New().Size() {
		return k, fmt.Errorf("auth key of %d octets for %s", len(sp.SecretKey), a.Name)
	}
	k.Auth, k.AuthKey = a, sp.SecretKey
	if c.PrivPass != "" {
		if len(sp.PrivacyKey) < p.KeyLen {
			return k, fmt.Errorf("priv key of %d octets for %s", len(sp.PrivacyKey), p.Name)
		}
		k.Priv, k.PrivKey = p, sp.PrivacyKey[:p.KeyLen]
	}
	return k, nil
}

// ParseEngineID checks an SnmpEngineID given in hex (RFC 3411 5: 5 to 32
// octets, not all zero or all 0xff); a "0x" prefix is allowed.
func ParseEngineID(s string) ([]byte, error) {
	b, err := hex.DecodeString(strings.TrimPrefix(s, "0x"))
	if err != nil || len(b) < 5 || len(b) > 32 {
		return nil, fmt.Errorf("%q is not 5 to 32 bytes in hex", s)
	}
	zero, ff := true, true
	for _, c := range b {
		zero, ff = zero && c == 0, ff && c == 0xff
	}
	if zero || ff {
		return nil, fmt.Errorf("%q is all 0x00 or all 0xff octets (RFC 3411)", s)
	}
	return b, nil
}
