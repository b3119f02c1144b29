package responder

import (
	"fmt"
	"slices"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/usm"
)

// Level is an SNMPv3 security level as msgFlags carries it.
type Level byte

const (
	NoAuthNoPriv Level = 0
	AuthNoPriv   Level = 1
	AuthPriv     Level = 3
)

func (l Level) String() string {
	switch l {
	case NoAuthNoPriv:
		return "noAuthNoPriv"
	case AuthNoPriv:
		return "authNoPriv"
	case AuthPriv:
		return "authPriv"
	}
	return fmt.Sprintf("Level(%d)", byte(l))
}

// V3 configures SNMPv3 with the User-based Security Model (RFC 3414).
type V3 struct {
	// EngineID is snmpEngineID (RFC 3411 format, 5 to 32 octets); the
	// users' keys are localized to it.
	EngineID []byte
	// Boots is snmpEngineBoots of this start, already incremented and
	// persisted by the caller (1 to 2147483647; at 2147483647 every
	// authenticated request fails, RFC 3414 2.2.2).
	Boots uint32
	// Start is when snmpEngineTime was 0 (usm.Engine.Start): the engine
	// the traps are sent from has the same time. Zero: New.
	Start time.Time
	// Users are the only users answered.
	Users []User
}

// User is one USM user: localized keys, never passwords.
type User struct {
	Name string
	Keys usm.Keys // nil AuthKey: noAuthNoPriv only
	// MinLevel is the lowest security level answered; a request below it
	// gets authorizationError.
	MinLevel Level
	// Subtrees are what the user may read; empty: everything served.
	Subtrees []asn1tree.OID
	// AllowMD5 must be set for HMAC-MD5 keys.
	AllowMD5 bool
}

// user is a User ready for requests.
type user struct {
	User
	level Level // the highest level its keys allow
}

func (v *V3) check() error {
	if len(v.EngineID) < 5 || len(v.EngineID) > 32 {
		return fmt.Errorf("v3 engine id: %d octets, not 5 to 32", len(v.EngineID))
	}
	if v.Boots < 1 || v.Boots > usm.MaxBoots {
		return fmt.Errorf("v3 engine boots %d is not from 1 to %d", v.Boots, usm.MaxBoots)
	}
	_, err := v.users()
	return err
}

// users indexes the users by name, checking each.
func (v *V3) users() (map[string]*user, error) {
	m := make(map[string]*user, len(v.Users))
	for i, u := range v.Users {
		key := fmt.Sprintf("v3 user %d (%q)", i, u.Name)
		if u.Name == "" || len(u.Name) > 32 {
			return nil, fmt.Errorf("%s: name must be 1 to 32 bytes", key)
		}
		if m[u.Name] != nil {
			return nil, fmt.Errorf("%s: a user of that name is already configured", key)
		}
		k := u.Keys
		lvl := NoAuthNoPriv
		if k.AuthKey != nil {
			if k.Auth.New == nil || len(k.AuthKey) != k.Auth.New().Size() {
				return nil, fmt.Errorf("%s: auth key of %d octets for %q", key, len(k.AuthKey), k.Auth.Name)
			}
			if k.Auth.Name == "MD5" && !u.AllowMD5 {
				return nil, fmt.Errorf("%s: HMAC-MD5 is refused unless allowed explicitly", key)
			}
			lvl = AuthNoPriv
		}
		if k.PrivKey != nil {
			if lvl == NoAuthNoPriv {
				return nil, fmt.Errorf("%s: privacy needs authentication", key)
			}
			switch k.Priv.Name {
			case "AES", "AES192", "AES256", "AES192C", "AES256C":
			default:
				return nil, fmt.Errorf("%s: privacy protocol %q is refused (AES only)", key, k.Priv.Name)
			}
			if len(k.PrivKey) != k.Priv.KeyLen {
				return nil, fmt.Errorf("%s: priv key of %d octets for %s", key, len(k.PrivKey), k.Priv.Name)
			}
			lvl = AuthPriv
		}
		switch u.MinLevel {
		case NoAuthNoPriv, AuthNoPriv, AuthPriv:
		default:
			return nil, fmt.Errorf("%s: minimum level %v", key, u.MinLevel)
		}
		if u.MinLevel > lvl {
			return nil, fmt.Errorf("%s: minimum level %v needs keys the user lacks (it has %v)", key, u.MinLevel, lvl)
		}
		u.Subtrees = outermost(u.Subtrees)
		m[u.Name] = &user{User: u, level: lvl}
	}
	return m, nil
}

// outermost sorts subtrees and drops those inside another, as filterView
// needs; on a copy.
func outermost(subs []asn1tree.OID) []asn1tree.OID {
	s := slices.Clone(subs)
	slices.SortFunc(s, asn1tree.Compare)
	out := s[:0]
	for _, o := range s {
		if len(out) == 0 || !o.HasPrefix(out[len(out)-1]) {
			out = append(out, o)
		}
	}
	return out
}
