package agentx

import (
	"fmt"

	"github.com/perfagent/subagent/asn1tree"
)

// vbType is v.type of a VarBind (RFC 2741 section 5.4).
type vbType uint16

// VarBind types.
const (
	vbInteger        vbType = 2
	vbOctetString    vbType = 4
	vbNull           vbType = 5
	vbOID            vbType = 6
	vbIPAddress      vbType = 64
	vbCounter32      vbType = 65
	vbGauge32        vbType = 66
	vbTimeTicks      vbType = 67
	vbOpaque         vbType = 68
	vbCounter64      vbType = 70
	vbNoSuchObject   vbType = 128
	vbNoSuchInstance vbType = 129
	vbEndOfMibView   vbType = 130
)

func (t vbType) String() string {
	switch t {
	case vbInteger:
		return "Integer"
	case vbOctetString:
		return "OctetString"
	case vbNull:
		return "Null"
	case vbOID:
		return "ObjectIdentifier"
	case vbIPAddress:
		return "IpAddress"
	case vbCounter32:
		return "Counter32"
	case vbGauge32:
		return "Gauge32"
	case vbTimeTicks:
		return "TimeTicks"
	case vbOpaque:
		return "Opaque"
	case vbCounter64:
		return "Counter64"
	case vbNoSuchObject:
		return "noSuchObject"
	case vbNoSuchInstance:
		return "noSuchInstance"
	case vbEndOfMibView:
		return "endOfMibView"
	}
	return fmt.Sprintf("vbType(%d)", uint16(t))
}

// varbind is one wire VarBind. num carries the numeric types, str the
// octet-string-like ones (OctetString, IpAddress, Opaque), oid an OID value.
type varbind struct {
	typ  vbType
	name asn1tree.OID
	num  uint64
	str  string
	oid  asn1tree.OID
}

// searchRange is one SearchRange: start (with its include flag) up to end;
// an empty end means no upper bound.
type searchRange struct {
	start   asn1tree.OID
	include bool
	end     asn1tree.OID
}

// packet is any AgentX PDU: the header plus the fields of its type. One
// struct for all types keeps the codec a pair of switch statements.
type packet struct {
	header
	context string // when flagNonDefaultContext

	// Open (timeout, id, descr), AddAgentCaps (id, descr), RemoveAgentCaps (id).
	timeout uint8
	id      asn1tree.OID
	descr   string

	// Close.
	reason closeReason

	// Register and Unregister (Unregister has no timeout).
	priority   uint8
	rangeSubID uint8
	subtree    asn1tree.OID
	upperBound uint32

	// Get, GetNext, GetBulk.
	nonRepeaters   uint16
	maxRepetitions uint16
	ranges         []searchRange

	// TestSet, Notify, IndexAllocate, IndexDeallocate, Response.
	varbinds []varbind

	// Response.
	sysUpTime uint32
	resError  ErrorCode
	resIndex  uint16
}

// hasContext reports whether the type carries an optional context field.
func (t pduType) hasContext() bool {
	switch t {
	case typeOpen, typeClose, typeCommitSet, typeUndoSet, typeCleanupSet, typeResponse:
		return false
	}
	return t.known()
}

// closeReason is c.reason of a Close PDU.
type closeReason uint8

// Close reasons (RFC 2741 section 6.2.2).
const (
	reasonOther         closeReason = 1
	reasonParseError    closeReason = 2
	reasonProtocolError closeReason = 3
	reasonTimeouts      closeReason = 4
	reasonShutdown      closeReason = 5
	reasonByManager     closeReason = 6
)

func (r closeReason) String() string {
	switch r {
	case reasonOther:
		return "reasonOther"
	case reasonParseError:
		return "reasonParseError"
	case reasonProtocolError:
		return "reasonProtocolError"
	case reasonTimeouts:
		return "reasonTimeouts"
	case reasonShutdown:
		return "reasonShutdown"
	case reasonByManager:
		return "reasonByManager"
	}
	return fmt.Sprintf("reason(%d)", uint8(r))
}
