package agentx

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

// Config describes a subagent. The zero value of every field but Subtrees
// has a usable default.
type Config struct {
	// Address of the master: "unix:/path" or "tcp:host:port" (see
	// ParseAddress). Default DefaultAddress.
	Address string
	// ID names the subagent in the Open PDU (o.id); may be empty.
	ID asn1tree.OID
	// Description is o.descr, shown by the master (at most 255 bytes).
	Description string
	// Timeout is how long the master waits for our answers (o.timeout),
	// rounded up to whole seconds, at most 255 s. 0 leaves it to the
	// master (net-snmp: agentXTimeout, 1 s).
	Timeout time.Duration
	// Priority of the registrations, 1 (wins) to 255. 0 means 127.
	Priority uint8
	// Subtrees are registered whole, one Register PDU each. Required.
	Subtrees []asn1tree.OID
	// Capabilities are added with AddAgentCaps after every (re)connect so
	// the master's sysORTable names us.
	Capabilities []Capability
	// PingInterval between keep-alive Pings; a failed Ping reconnects.
	// 0 means 15 s (net-snmp's agentXPingInterval); negative disables.
	PingInterval time.Duration
	// RequestTimeout bounds dialing, each write and the wait for the
	// master's Response to our own PDUs. 0 means 5 s.
	RequestTimeout time.Duration
	// BackoffMin and BackoffMax bound the delay between reconnect
	// attempts, which doubles from min to max. 0 means 100 ms and 5 s.
	BackoffMin, BackoffMax time.Duration
	// Logger receives one line per state change. nil means slog.Default().
	Logger *slog.Logger
}

// Capability is one sysORTable entry: the OID of an AGENT-CAPABILITIES or
// MODULE-COMPLIANCE statement and its description.
type Capability struct {
	ID          asn1tree.OID
	Description string
}

// Defaults.
const (
	DefaultPriority       = 127
	DefaultPingInterval   = 15 * time.Second
	DefaultRequestTimeout = 5 * time.Second
	DefaultBackoffMin     = 100 * time.Millisecond
	DefaultBackoffMax     = 5 * time.Second
)

// withDefaults validates c and fills in its defaults, naming the field at
// fault.
func (c Config) withDefaults() (Config, error) {
	if c.Address == "" {
		c.Address = DefaultAddress
	}
	if _, _, err := ParseAddress(c.Address); err != nil {
		return c, err
	}
	if err := checkOID("Config.ID", c.ID, true); err != nil {
		return c, err
	}
	if len(c.Description) > 255 {
		return c, fmt.Errorf("agentx: Config.Description is %d bytes, at most 255 allowed", len(c.Description))
	}
	if c.Timeout < 0 || c.Timeout > 255*time.Second {
		return c, fmt.Errorf("agentx: Config.Timeout %v is outside 0 to 255s", c.Timeout)
	}
	if c.Priority == 0 {
		c.Priority = DefaultPriority
	}
	if len(c.Subtrees) == 0 {
		return c, errors.New("agentx: Config.Subtrees is empty: nothing to register")
	}
	for i, s := range c.Subtrees {
		if err := checkOID(fmt.Sprintf("Config.Subtrees[%d]", i), s, false); err != nil {
			return c, err
		}
	}
	for i, cp := range c.Capabilities {
		if err := checkOID(fmt.Sprintf("Config.Capabilities[%d].ID", i), cp.ID, false); err != nil {
			return c, err
		}
		if len(cp.Description) > 255 {
			return c, fmt.Errorf("agentx: Config.Capabilities[%d].Description is longer than 255 bytes", i)
		}
	}
	if c.PingInterval == 0 {
		c.PingInterval = DefaultPingInterval
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.BackoffMin <= 0 {
		c.BackoffMin = DefaultBackoffMin
	}
	if c.BackoffMax <= 0 {
		c.BackoffMax = max(DefaultBackoffMax, c.BackoffMin)
	}
	if c.BackoffMax < c.BackoffMin {
		return c, fmt.Errorf("agentx: Config.BackoffMax %v is below Config.BackoffMin %v", c.BackoffMax, c.BackoffMin)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}

func checkOID(field string, o asn1tree.OID, emptyOK bool) error {
	switch {
	case len(o) == 0 && !emptyOK:
		return fmt.Errorf("agentx: %s is empty", field)
	case len(o) > asn1tree.MaxLen:
		return fmt.Errorf("agentx: %s has %d sub-identifiers, at most %d allowed", field, len(o), asn1tree.MaxLen)
	}
	return nil
}

// openTimeout is Timeout in whole seconds, rounded up.
func (c *Config) openTimeout() uint8 {
	return uint8((c.Timeout + time.Second - 1) / time.Second)
}
