package agentx

import (
	"context"
	"fmt"

	"github.com/perfagent/subagent/asn1tree"
)

// VarBind is one variable of a notification.
type VarBind struct {
	OID   asn1tree.OID
	Value asn1tree.Value
}

// The two OIDs a notification is built around (RFC 3416 section 4.2.6).
var (
	// SysUpTime0 is sysUpTime.0, optional and first when present.
	SysUpTime0 = asn1tree.OID{1, 3, 6, 1, 2, 1, 1, 3, 0}
	// SnmpTrapOID0 is snmpTrapOID.0, mandatory: the notification's OID.
	SnmpTrapOID0 = asn1tree.OID{1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0}
)

var (
	sysUpTime0   = SysUpTime0.Clone()
	snmpTrapOID0 = SnmpTrapOID0.Clone()
)

// Notify asks the master to send a notification to the destinations in its
// own configuration. vbs must start with snmpTrapOID.0 (an
// ObjectIdentifier), optionally preceded by sysUpTime.0 (TimeTicks); the
// master adds sysUpTime.0 when it is missing. When no session is open,
// Notify waits for one until ctx ends and then fails with ErrNotConnected.
// A nil error means the master received the notification, not that any
// manager did.
func (a *Subagent) Notify(ctx context.Context, vbs []VarBind) error {
	wire, err := notifyVarBinds(vbs)
	if err != nil {
		return err
	}
	for {
		a.mu.Lock()
		s, up := a.cur, a.up
		a.mu.Unlock()
		if s != nil {
			_, err := s.request(ctx, &packet{header: header{typ: typeNotify}, varbinds: wire}, "Notify")
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", ErrNotConnected, ctx.Err())
		case <-up:
		}
	}
}

// notifyVarBinds checks the layout the master insists on (net-snmp answers
// anything else with processingError) and converts to wire VarBinds.
func notifyVarBinds(vbs []VarBind) ([]varbind, error) {
	if len(vbs) > maxVarBinds {
		return nil, fmt.Errorf("agentx: Notify with %d VarBinds, at most %d allowed", len(vbs), maxVarBinds)
	}
	i := 0
	if len(vbs) > 0 && vbs[0].OID.Equal(sysUpTime0) {
		if vbs[0].Value.Kind != asn1tree.TimeTicks {
			return nil, fmt.Errorf("agentx: Notify: sysUpTime.0 is %s, want TimeTicks", vbs[0].Value.Kind)
		}
		i = 1
	}
	if len(vbs) <= i || !vbs[i].OID.Equal(snmpTrapOID0) {
		return nil, fmt.Errorf("agentx: Notify: VarBind %d must be snmpTrapOID.0 (%s), after an optional sysUpTime.0", i+1, snmpTrapOID0)
	}
	if v := vbs[i].Value; v.Kind != asn1tree.ObjectIdentifier || len(v.OID) == 0 {
		return nil, fmt.Errorf("agentx: Notify: snmpTrapOID.0 must be a non-empty ObjectIdentifier, not %s", v.Kind)
	}
	wire := make([]varbind, len(vbs))
	for j, vb := range vbs {
		switch {
		case len(vb.OID) == 0 || len(vb.OID) > asn1tree.MaxLen:
			return nil, fmt.Errorf("agentx: Notify: VarBind %d has an OID of %d sub-identifiers", j+1, len(vb.OID))
		case j > i && (vb.OID.Equal(sysUpTime0) || vb.OID.Equal(snmpTrapOID0)):
			return nil, fmt.Errorf("agentx: Notify: %s may only appear at the start", vb.OID)
		case !servable(vb.Value):
			return nil, fmt.Errorf("agentx: Notify: VarBind %d (%s) has no value to send (%s)", j+1, vb.OID, vb.Value.Kind)
		}
		wire[j] = valueVarBind(vb.OID, vb.Value)
	}
	return wire, nil
}
