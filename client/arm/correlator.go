package arm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
)

// Correlator fields (ARM 2.0 appendix, format 1, network byte order).
const (
	VendorID     = 32473 // the enterprise number of the default base OID
	AgentVersion = 1
	corrLen      = 26 // with an IPv4 address
	corrMin      = 22 // without an address
	corrMax      = 168
)

// Correlator identifies a transaction instance to its children, in the
// ARM 2.0 correlator format 1: this host's IPv4 address, vendor 32473,
// the agent instance (PID), the transaction class id and instance.
type Correlator struct {
	b [corrMax]byte
	n uint8
}

// Bytes is the correlator to forward (its length field first).
func (c *Correlator) Bytes() []byte { return c.b[:c.n] }

// ParseCorrelator checks a correlator received from a parent.
func ParseCorrelator(b []byte) (Correlator, error) {
	var c Correlator
	if len(b) < corrMin {
		return c, fmt.Errorf("correlator: %d bytes, at least %d", len(b), corrMin)
	}
	n := int(binary.BigEndian.Uint16(b))
	switch {
	case n < corrMin || n > corrMax || n > len(b):
		return c, fmt.Errorf("correlator: length field %d, have %d bytes (%d to %d allowed)", n, len(b), corrMin, corrMax)
	case b[2] != 1:
		return c, fmt.Errorf("correlator: format %d, want 1", b[2])
	case int(binary.BigEndian.Uint16(b[20:])) > n-corrMin:
		return c, errors.New("correlator: address longer than the correlator")
	}
	c.n = uint8(n)
	copy(c.b[:], b[:n])
	return c, nil
}

// fields returns the parent link a record carries.
func (c *Correlator) fields() (tran, inst uint32, agent, vendor uint16) {
	be := binary.BigEndian
	return be.Uint32(c.b[16:]), be.Uint32(c.b[12:]), be.Uint16(c.b[10:]), be.Uint16(c.b[6:])
}

var hostAddr = sync.OnceValue(func() [4]byte {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() {
			if v4 := n.IP.To4(); v4 != nil {
				return [4]byte(v4)
			}
		}
	}
	return [4]byte{127, 0, 0, 1}
})

// Correlator returns a correlator for this instance, to pass to children.
func (h *Handle) Correlator() Correlator {
	var c Correlator
	if h.t == nil {
		return c
	}
	if h.inst == 0 {
		h.inst = h.t.app.a.inst.Add(1)
	}
	be := binary.BigEndian
	be.PutUint16(c.b[0:], corrLen)
	c.b[2] = 1
	be.PutUint16(c.b[4:], 1) // IPv4
	be.PutUint16(c.b[6:], VendorID)
	be.PutUint16(c.b[8:], AgentVersion)
	be.PutUint16(c.b[10:], h.t.app.a.agent)
	be.PutUint32(c.b[12:], h.inst)
	be.PutUint32(c.b[16:], uint32(h.t.entry.ID))
	be.PutUint16(c.b[20:], 4)
	a := hostAddr()
	copy(c.b[22:], a[:])
	c.n = corrLen
	return c
}

// StartChild begins an instance whose parent sent correlator parent; an
// empty (zero) correlator starts an instance without a parent.
func (t *Tran) StartChild(parent Correlator) Handle {
	h := t.Start()
	if h.t != nil && parent.n >= corrMin {
		h.parent, h.flags = parent, h.flags|1
	}
	return h
}
