package agentx

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

// Config describes a subagent. The zero value of every field but Subtrees
// and Registrations has a usable default.
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
	// master (net-snmp: agentXTimeout, 1 s). It also bounds how long a
	// PDU of the master's may take to arrive whole once it has begun (0:
	// RequestTimeout); a PDU cut short closes the session.
	Timeout time.Duration
	// Priority of Subtrees and of Registrations without their own, 1
	// (wins) to 255. 0 means 127.
	Priority uint8
	// Subtrees are registered whole at Priority, one Register PDU each.
	Subtrees []asn1tree.OID
	// Registrations are registered after Subtrees, each with its own
	// range and priority. Subtrees and Registrations must not both be empty.
	Registrations []Registration
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
	// WalkBudget is the bytes the walks' moments may keep alive together
	// (asn1tree.Walks.Budget); 0: asn1tree.DefaultWalkBudget.
	WalkBudget int64
	// SharedWalks, when set, is the budget the walks share with the other
	// front ends (asn1tree.Walks.Shared); WalkBudget is then unused.
	SharedWalks *asn1tree.WalkBudget
	// Logger receives one line per state change. nil means slog.Default().
	Logger *slog.Logger
	// Writer takes the Set transactions for the registered subtrees; nil
	// refuses every Set with notWritable (a read-only agent).
	Writer Writer
}

// Registration is one Register PDU (RFC 2741 section 6.2.3).
type Registration struct {
	// Subtree is the registered subtree, r.subtree.
	Subtree asn1tree.OID
	// RangeSubID, when not 0, makes sub-identifier number RangeSubID of
	// Subtree (counting from 1) the lower bound of a range that ends at
	// UpperBound: the registration covers every subtree named by Subtree
	// with that sub-identifier replaced by a value of the range, e.g.
	// 1.3.6.1.4.1.32473.1.20.1.[2-4].7 (RangeSubID 11, UpperBound 4) is
	// row 7 of columns 2 to 4. net-snmp keeps one registration per value:
	// keep ranges short.
	RangeSubID uint8
	UpperBound uint32
	// Priority 1 (wins) to 255. 0 means Config.Priority.
	Priority uint8
	// Optional: a master that refuses it (duplicateRegistration: another
	// subagent serves it at that priority) leaves the session up without
	// it, logged once per refusal, instead of closing the session.
	Optional bool
}

// String shows the range as net-snmp does, e.g. 1.3.6.1.2.1.2.2.1.[1-22].5.
func (r Registration) String() string {
	if r.RangeSubID == 0 || int(r.RangeSubID) > len(r.Subtree) {
		return r.Subtree.String()
	}
	i := int(r.RangeSubID) - 1
	s := fmt.Sprintf("[%d-%d]", r.Subtree[i], r.UpperBound)
	if i > 0 {
		s = r.Subtree[:i].String() + "." + s
	}
	if rest := r.Subtree[i+1:]; len(rest) > 0 {
		s += "." + rest.String()
	}
	return s
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
	if len(c.Subtrees) == 0 && len(c.Registrations) == 0 {
		return c, errors.New("agentx: Config.Subtrees and Config.Registrations are empty: nothing to register")
	}
	for i, s := range c.Subtrees {
		if err := checkOID(fmt.Sprintf("Config.Subtrees[%d]", i), s, false); err != nil {
			return c, err
		}
	}
	for i, r := range c.Registrations {
		if err := r.check(fmt.Sprintf("Config.Registrations[%d]", i)); err != nil {
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

func (r *Registration) check(field string) error {
	if err := checkOID(field+".Subtree", r.Subtree, false); err != nil {
		return err
	}
	switch k := int(r.RangeSubID); {
	case k > len(r.Subtree):
		return fmt.Errorf("agentx: %s.RangeSubID %d is beyond the %d sub-identifiers of %s", field, k, len(r.Subtree), r.Subtree)
	case k == 0 && r.UpperBound != 0:
		return fmt.Errorf("agentx: %s.UpperBound is set but RangeSubID is 0", field)
	case k > 0 && r.UpperBound < r.Subtree[k-1]:
		return fmt.Errorf("agentx: %s.UpperBound %d is below the range's lower bound %d", field, r.UpperBound, r.Subtree[k-1])
	}
	return nil
}

// registrations lists what to register, in order: Subtrees, then
// Registrations, with priorities filled in and OIDs copied so that a
// caller reusing its slices cannot change a running subagent.
func (c *Config) registrations() []Registration {
	regs := make([]Registration, 0, len(c.Subtrees)+len(c.Registrations))
	for _, s := range c.Subtrees {
		regs = append(regs, Registration{Subtree: s.Clone(), Priority: c.Priority})
	}
	for _, r := range c.Registrations {
		r.Subtree = r.Subtree.Clone()
		if r.Priority == 0 {
			r.Priority = c.Priority
		}
		regs = append(regs, r)
	}
	return regs
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

// pduTimeout bounds the arrival of one PDU of the master's.
func (c *Config) pduTimeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return c.RequestTimeout
}
