package usm

import "time"

// Engine is the agent's one SNMPv3 engine (RFC 3411 snmpEngineID,
// snmpEngineBoots, snmpEngineTime): the responder answers as it and
// every v3 trap is sent from it. The daemon makes it once per start
// (daemon.loadEngine), with Boots counted, and persists it before the
// first message is answered or sent.
type Engine struct {
	ID    []byte    // snmpEngineID, 5 to 32 octets
	Boots uint32    // snmpEngineBoots of this start, 1 to MaxBoots
	Start time.Time // snmpEngineTime counts seconds from here
}

// Time is snmpEngineTime at now: whole seconds since Start, 0 before it,
// never above MaxBoots (RFC 3414 2.2.1).
func (e Engine) Time(now time.Time) uint32 {
	s := max(now.Sub(e.Start), 0) / time.Second
	return uint32(min(s, MaxBoots))
}
