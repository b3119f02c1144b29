package traps

import (
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// Dest is one destination.
type Dest struct {
	Address   string // host:port
	Version   string // v1, v2c or v3
	Community string // v1 and v2c
	Inform    bool   // v2c and v3: InformRequest, acknowledged and retried
	Retries   int    // informs: resends after a timeout
	Timeout   time.Duration
	Queue     int // notifications waiting at most; more are dropped

	// SNMPv3 (USM). Level follows from the passwords given: both make
	// authPriv, only AuthPass authNoPriv.
	User      string
	AuthProto string // MD5, SHA, SHA224, SHA256, SHA384, SHA512
	AuthPass  string
	PrivProto string // DES, AES, AES192, AES256, AES192C, AES256C
	PrivPass  string
	// EngineID (hex) is this sender's snmpEngineID for v3 traps, which
	// the receiver must know (snmptrapd: createUser -e). Empty: EngineID("").
	EngineID string
}

func (d Dest) String() string {
	kind := "trap"
	if d.Inform {
		kind = "inform"
	}
	return d.Version + " " + kind + " " + d.Address
}

var (
	authProtos = []string{"MD5", "SHA", "SHA224", "SHA256", "SHA384", "SHA512"}
	privProtos = []string{"DES", "AES", "AES192", "AES256", "AES192C", "AES256C"}
)

// Check validates a destination; the error names the field.
func (d Dest) Check() error {
	_, err := d.norm()
	return err
}

func (d Dest) norm() (Dest, error) {
	host, port, err := net.SplitHostPort(d.Address)
	if err != nil || host == "" {
		return d, fmt.Errorf("address: %q is not host:port", d.Address)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return d, fmt.Errorf("address: port %q is not from 1 to 65535", port)
	}
	if d.Timeout <= 0 {
		d.Timeout = 2 * time.Second
	}
	if d.Timeout > time.Minute {
		return d, fmt.Errorf("timeout: %v is above 1m", d.Timeout)
	}
	if d.Retries < 0 || d.Retries > 10 {
		return d, fmt.Errorf("retries: %d is not from 0 to 10", d.Retries)
	}
	if d.Queue <= 0 {
		d.Queue = 64
	}
	if d.Queue > 10000 {
		return d, fmt.Errorf("queue: %d is above 10000", d.Queue)
	}
	switch d.Version {
	case "v1", "v2c":
		if d.Community == "" {
			return d, fmt.Errorf("community: must not be empty for %s", d.Version)
		}
		if d.Inform && d.Version == "v1" {
			return d, fmt.Errorf("inform: SNMPv1 has no informs")
		}
	case "v3":
		if d.User == "" {
			return d, fmt.Errorf("user: must not be empty for v3")
		}
		// A protocol without its password would silently send with less
		// security than configured.
		if d.AuthProto != "" && d.AuthPass == "" {
			return d, fmt.Errorf("auth_password: must be set with auth_protocol %s", d.AuthProto)
		}
		if d.PrivProto != "" && d.PrivPass == "" {
			return d, fmt.Errorf("priv_password: must be set with priv_protocol %s", d.PrivProto)
		}
		if d.PrivPass != "" && d.AuthPass == "" {
			return d, fmt.Errorf("priv_password: privacy needs authentication (auth_password)")
		}
		for _, p := range []struct{ field, pass, proto string }{{"auth_password", d.AuthPass, ""}, {"priv_password", d.PrivPass, ""}} {
			if p.pass != "" && len(p.pass) < 8 {
				return d, fmt.Errorf("%s: at least 8 characters (RFC 3414)", p.field)
			}
		}
		if d.AuthPass != "" && !oneOf(&d.AuthProto, "SHA", authProtos) {
			return d, fmt.Errorf("auth_protocol: %q is not one of %s", d.AuthProto, strings.Join(authProtos, ", "))
		}
		if d.PrivPass != "" && !oneOf(&d.PrivProto, "AES", privProtos) {
			return d, fmt.Errorf("priv_protocol: %q is not one of %s", d.PrivProto, strings.Join(privProtos, ", "))
		}
		if d.EngineID == "" {
			d.EngineID = EngineID("")
		}
		if b, err := hex.DecodeString(strings.TrimPrefix(d.EngineID, "0x")); err != nil || len(b) < 5 || len(b) > 32 {
			return d, fmt.Errorf("engine_id: %q is not 5 to 32 bytes in hex", d.EngineID)
		}
	default:
		return d, fmt.Errorf("version: %q is not v1, v2c or v3", d.Version)
	}
	return d, nil
}

// oneOf upper-cases *p (empty: def) and tells whether it is in allowed.
func oneOf(p *string, def string, allowed []string) bool {
	if *p == "" {
		*p = def
	}
	*p = strings.ToUpper(*p)
	for _, a := range allowed {
		if *p == a {
			return true
		}
	}
	return false
}

// EngineID is the default SNMPv3 engine ID of this sender in hex: RFC
// 3411 text format under the documentation enterprise 32473, with the
// host name (or name, when given).
func EngineID(name string) string {
	if name == "" {
		name, _ = os.Hostname()
	}
	if name == "" {
		name = "subagent"
	}
	if len(name) > 27 {
		name = name[:27]
	}
	return "80007ed904" + hex.EncodeToString([]byte(name))
}
