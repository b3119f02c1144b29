package traps

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/perfagent/subagent/usm"
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
	// v3 traps are sent from the agent's engine (New), which the
	// receiver must know (snmptrapd: createUser -e <snmpEngineID.0>).
}

func (d Dest) String() string {
	kind := "trap"
	if d.Inform {
		kind = "inform"
	}
	return d.Version + " " + kind + " " + d.Address
}

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
		c, err := usm.Credentials{User: d.User, AuthProto: d.AuthProto, AuthPass: d.AuthPass,
			PrivProto: d.PrivProto, PrivPass: d.PrivPass}.Norm()
		if err != nil {
			return d, err
		}
		d.AuthProto, d.PrivProto = c.AuthProto, c.PrivProto
	default:
		return d, fmt.Errorf("version: %q is not v1, v2c or v3", d.Version)
	}
	return d, nil
}
