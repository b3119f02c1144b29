package responder

import (
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/usm"
)

// Defaults and limits of Config.
const (
	DefaultListen         = "127.0.0.1:1161"
	DefaultMaxRepetitions = 100
	DefaultMaxMsgSize     = 1472 // an Ethernet MTU minus IPv4 and UDP headers
	MinMsgSize            = 484  // RFC 3417 section 3.2: every agent accepts this
	MaxMsgSizeCap         = 65507
	maxRepetitionsCap     = 10000
)

// Config configures a Responder; zero fields take the defaults above.
type Config struct {
	// Listen is the UDP address, host:port ("[::1]:1161" for IPv6).
	Listen string
	// Community is the only community answered; "" turns SNMPv1 and
	// v2c off, which needs V3.
	Community string
	// MaxRepetitions is the most varbinds one GetBulk response carries
	// (one whole repetition is always answered, size permitting).
	MaxRepetitions int
	// MaxMsgSize is the largest response in bytes, 484 to 65507.
	MaxMsgSize int
	// System, when set, is served as the SNMPv2-MIB system group
	// (1.3.6.1.2.1.1) before the tree, for managers' discovery.
	System *System
	// V3, when set, answers SNMPv3 with USM (v3config.go).
	V3 *V3
	// AuthFailures bound, per source address, the SNMPv3 authentication
	// failures answered (wrong digests, unknown users, levels a user
	// lacks, decryption errors); a source past them is not answered at
	// all, even when right. Discoveries bound the unknownEngineIDs
	// Reports. Zero fields: usm.DefaultFailureLimits and
	// usm.DefaultDiscoveryLimits. New sets them; Update keeps them.
	AuthFailures, Discoveries usm.Limits
	// WalkBudget is the bytes the walks' moments may keep alive together
	// (asn1tree.Walks.Budget); 0: asn1tree.DefaultWalkBudget. New sets
	// it; Update keeps it.
	WalkBudget int64
	// SharedWalks, when set, is the budget the walks share with the other
	// front ends (asn1tree.Walks.Shared: refresh.walk_memory_mb is one
	// budget for all walks); WalkBudget is then unused. New sets it.
	SharedWalks *asn1tree.WalkBudget
}

// withDefaults fills zero fields and checks the rest.
func (c Config) withDefaults() (Config, error) {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.MaxRepetitions == 0 {
		c.MaxRepetitions = DefaultMaxRepetitions
	}
	if c.MaxMsgSize == 0 {
		c.MaxMsgSize = DefaultMaxMsgSize
	}
	c.AuthFailures = c.AuthFailures.WithDefaults(usm.DefaultFailureLimits)
	c.Discoveries = c.Discoveries.WithDefaults(usm.DefaultDiscoveryLimits)
	if err := c.AuthFailures.Check(); err != nil {
		return c, fmt.Errorf("auth failure limits: %w", err)
	}
	if err := c.Discoveries.Check(); err != nil {
		return c, fmt.Errorf("discovery limits: %w", err)
	}
	if c.Community == "" && c.V3 == nil {
		return c, errors.New("community must not be empty without SNMPv3 users")
	}
	if c.V3 != nil {
		if err := c.V3.check(); err != nil {
			return c, err
		}
	}
	if c.MaxRepetitions < 1 || c.MaxRepetitions > maxRepetitionsCap {
		return c, fmt.Errorf("max repetitions %d is not from 1 to %d", c.MaxRepetitions, maxRepetitionsCap)
	}
	if c.MaxMsgSize < MinMsgSize || c.MaxMsgSize > MaxMsgSizeCap {
		return c, fmt.Errorf("max message size %d is not from %d to %d", c.MaxMsgSize, MinMsgSize, MaxMsgSizeCap)
	}
	if c.System != nil {
		if err := c.System.check(); err != nil {
			return c, err
		}
	}
	return c, nil
}

// resolveListen turns host:port into a UDP address, saying what is wrong.
func resolveListen(s string) (*net.UDPAddr, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: want host:port such as 127.0.0.1:1161 or [::1]:1161", s)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: port %q is not a number from 0 to 65535", s, port)
	}
	if host == "" {
		return &net.UDPAddr{Port: int(p)}, nil
	}
	if ip := net.ParseIP(host); ip != nil {
		return &net.UDPAddr{IP: ip, Port: int(p)}, nil
	}
	a, err := net.ResolveUDPAddr("udp", s)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: host %q is not an IP address and does not resolve: %w", s, host, err)
	}
	return a, nil
}
