package agentx

import (
	"errors"
	"fmt"
)

// pduType is h.type (RFC 2741 section 6.1).
type pduType uint8

// PDU types.
const (
	typeOpen            pduType = 1
	typeClose           pduType = 2
	typeRegister        pduType = 3
	typeUnregister      pduType = 4
	typeGet             pduType = 5
	typeGetNext         pduType = 6
	typeGetBulk         pduType = 7
	typeTestSet         pduType = 8
	typeCommitSet       pduType = 9
	typeUndoSet         pduType = 10
	typeCleanupSet      pduType = 11
	typeNotify          pduType = 12
	typePing            pduType = 13
	typeIndexAllocate   pduType = 14
	typeIndexDeallocate pduType = 15
	typeAddAgentCaps    pduType = 16
	typeRemoveAgentCaps pduType = 17
	typeResponse        pduType = 18
)

var typeNames = [...]string{"", "Open", "Close", "Register", "Unregister", "Get", "GetNext", "GetBulk",
	"TestSet", "CommitSet", "UndoSet", "CleanupSet", "Notify", "Ping", "IndexAllocate", "IndexDeallocate",
	"AddAgentCaps", "RemoveAgentCaps", "Response"}

func (t pduType) String() string {
	if t >= typeOpen && int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

func (t pduType) known() bool { return t >= typeOpen && t <= typeResponse }

// h.flags bits.
const (
	flagInstanceRegistration uint8 = 0x01
	flagNewIndex             uint8 = 0x02
	flagAnyIndex             uint8 = 0x04
	flagNonDefaultContext    uint8 = 0x08
	flagNetworkByteOrder     uint8 = 0x10
)

const (
	headerLen = 20
	version1  = 1
	// maxPayload bounds h.payload_length in both directions; net-snmp's
	// largest useful PDU is far smaller.
	maxPayload = 64 << 10
	// maxVarBinds bounds the VarBinds or SearchRanges of one PDU.
	maxVarBinds = 2048
)

// header is the fixed 20-byte AgentX header.
type header struct {
	version       uint8
	typ           pduType
	flags         uint8
	sessionID     uint32
	transactionID uint32
	packetID      uint32
	payloadLen    uint32
}

func (h *header) bigEndian() bool { return h.flags&flagNetworkByteOrder != 0 }

var (
	errShortHeader = errors.New("short header")
	errBadVersion  = errors.New("unsupported h.version")
)

// decodeHeader reads the header; the flags byte decides the order of every
// multi-byte field, header included.
func decodeHeader(b []byte) (header, error) {
	if len(b) < headerLen {
		return header{}, errShortHeader
	}
	h := header{version: b[0], typ: pduType(b[1]), flags: b[2]}
	big := h.bigEndian()
	h.sessionID = getU32(b[4:], big)
	h.transactionID = getU32(b[8:], big)
	h.packetID = getU32(b[12:], big)
	h.payloadLen = getU32(b[16:], big)
	if h.version != version1 {
		return h, fmt.Errorf("%w %d", errBadVersion, h.version)
	}
	return h, nil
}

// appendHeader appends h with payload length 0; finish patches it.
func appendHeader(b []byte, h *header) []byte {
	big := h.bigEndian()
	b = append(b, version1, byte(h.typ), h.flags, 0)
	b = putU32(b, h.sessionID, big)
	b = putU32(b, h.transactionID, big)
	b = putU32(b, h.packetID, big)
	return putU32(b, 0, big)
}

func getU16(b []byte, big bool) uint16 {
	if big {
		return uint16(b[0])<<8 | uint16(b[1])
	}
	return uint16(b[1])<<8 | uint16(b[0])
}

func getU32(b []byte, big bool) uint32 {
	if big {
		return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	}
	return uint32(b[3])<<24 | uint32(b[2])<<16 | uint32(b[1])<<8 | uint32(b[0])
}

func putU16(b []byte, v uint16, big bool) []byte {
	if big {
		return append(b, byte(v>>8), byte(v))
	}
	return append(b, byte(v), byte(v>>8))
}

func putU32(b []byte, v uint32, big bool) []byte {
	if big {
		return append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
}

func setU32(b []byte, v uint32, big bool) {
	putU32(b[:0], v, big)
}
