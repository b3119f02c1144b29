package armring

import (
	"encoding/binary"
	"fmt"
)

// Completion statuses of arm_stop.
const (
	Good   = 0
	Abort  = 1
	Failed = 2
)

// Record flags.
const (
	FlagParent = 1 // the instance was started with a parent's correlator
	FlagTrace  = 2 // the application asked for a trace
)

// Record is one completed transaction instance.
type Record struct {
	Tran   uint32 // index of the transaction entry
	Status uint8
	Flags  uint8
	Mask   uint8  // bit i: Values[i] (or, bit 6, Str) carries a value
	Dur    uint64 // response time, nanoseconds
	// The parent's correlator fields, when FlagParent is set.
	ParentTran   uint32
	ParentInst   uint32
	ParentAgent  uint16
	ParentVendor uint16
	// Values of the declared metrics: counters as the amount of this
	// instance (stop minus start), gauges and ids as their last value.
	Values [NumMetrics]uint64
	Str    [32]byte
}

// Record offsets; offset 0 is the slot's sequence number.
const (
	recOffTran   = 8
	recOffStatus = 12
	recOffFlags  = 13
	recOffMask   = 14
	recOffDur    = 16
	recOffPTran  = 32
	recOffPInst  = 36
	recOffPAgent = 40
	recOffPVend  = 42
	recOffValues = 48
	recOffStr    = 96
)

// encode writes r into a slot (RecordLen bytes), leaving the sequence.
func (r *Record) encode(b []byte) {
	le := binary.LittleEndian
	_ = b[RecordLen-1]
	le.PutUint32(b[recOffTran:], r.Tran)
	b[recOffStatus], b[recOffFlags], b[recOffMask], b[15] = r.Status, r.Flags, r.Mask, 0
	le.PutUint64(b[recOffDur:], r.Dur)
	le.PutUint64(b[24:], 0)
	le.PutUint32(b[recOffPTran:], r.ParentTran)
	le.PutUint32(b[recOffPInst:], r.ParentInst)
	le.PutUint16(b[recOffPAgent:], r.ParentAgent)
	le.PutUint16(b[recOffPVend:], r.ParentVendor)
	le.PutUint32(b[44:], 0)
	for i, v := range r.Values {
		le.PutUint64(b[recOffValues+8*i:], v)
	}
	copy(b[recOffStr:RecordLen], r.Str[:])
}

// DecodeRecord reads and checks a record copied out of a slot.
func DecodeRecord(b []byte) (Record, error) {
	var r Record
	if len(b) != RecordLen {
		return r, fmt.Errorf("record: %d bytes, want %d", len(b), RecordLen)
	}
	le := binary.LittleEndian
	r.Tran = le.Uint32(b[recOffTran:])
	r.Status, r.Flags, r.Mask = b[recOffStatus], b[recOffFlags], b[recOffMask]
	r.Dur = le.Uint64(b[recOffDur:])
	r.ParentTran = le.Uint32(b[recOffPTran:])
	r.ParentInst = le.Uint32(b[recOffPInst:])
	r.ParentAgent = le.Uint16(b[recOffPAgent:])
	r.ParentVendor = le.Uint16(b[recOffPVend:])
	for i := range r.Values {
		r.Values[i] = le.Uint64(b[recOffValues+8*i:])
	}
	copy(r.Str[:], b[recOffStr:])
	switch {
	case r.Status > Failed:
		return r, fmt.Errorf("record: status %d is not 0 (good), 1 (aborted) or 2 (failed)", r.Status)
	case r.Flags&^(FlagParent|FlagTrace) != 0:
		return r, fmt.Errorf("record: unknown flags %#x", r.Flags)
	case r.Mask >= 1<<NumFields:
		return r, fmt.Errorf("record: value mask %#x has bits beyond field %d", r.Mask, NumFields)
	case r.Dur > 1<<62:
		return r, fmt.Errorf("record: response time %d ns is out of range", r.Dur)
	}
	return r, nil
}
