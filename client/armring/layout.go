package armring

import (
	"encoding/binary"
	"fmt"
)

// Sizes of the fixed parts of a file.
const (
	HeaderLen  = 256
	RecordLen  = 128
	AppLen     = 128
	TranLen    = 640
	CounterLen = 128 + NumBins*8 // a transaction's counters and totals (totals.go)
)

// Bounds of a geometry, checked by the daemon when it creates a file and
// by the library when it maps one.
const (
	MinSlots = 16
	MaxSlots = 1 << 20
	MaxApps  = 4096
	MaxTrans = 65536
)

// Magic starts every file.
const Magic = "ARMRING\x00"

// Version is the format's major version (and the Hello's): 2 added the
// transactions' totals, which version 1 libraries would not write.
const Version = 2

// Header offsets.
const (
	OffMagic   = 0
	OffMajor   = 8
	OffMinor   = 10
	OffHdrLen  = 12
	OffSlots   = 16
	OffApps    = 20
	OffTrans   = 24
	OffRecLen  = 28
	OffFileLen = 32
	OffGen     = 40
	OffPID     = 48
	OffFlags   = 52
	OffBadBuf  = 56 // library: data buffers refused (wrong size or format)
	OffNoSlot  = 64 // library: instances not measured (no free instance slot, table full)
	OffHead    = 128
	OffTail    = 192
)

// Geometry is the shape of a file: ring slots (a power of two), application
// and transaction table entries.
type Geometry struct {
	Slots uint32
	Apps  uint32
	Trans uint32
}

// Check reports a geometry outside the bounds.
func (g Geometry) Check() error {
	switch {
	case g.Slots < MinSlots || g.Slots > MaxSlots || g.Slots&(g.Slots-1) != 0:
		return fmt.Errorf("ring slots %d: want a power of two from %d to %d", g.Slots, MinSlots, MaxSlots)
	case g.Apps < 1 || g.Apps > MaxApps:
		return fmt.Errorf("application entries %d: want 1 to %d", g.Apps, MaxApps)
	case g.Trans < 1 || g.Trans > MaxTrans:
		return fmt.Errorf("transaction entries %d: want 1 to %d", g.Trans, MaxTrans)
	}
	return nil
}

// RingOff is the offset of ring slot 0.
func (g Geometry) RingOff() uint64 { return HeaderLen }

// AppOff is the offset of application entry 0.
func (g Geometry) AppOff() uint64 { return g.RingOff() + uint64(g.Slots)*RecordLen }

// TranOff is the offset of transaction entry 0.
func (g Geometry) TranOff() uint64 { return g.AppOff() + uint64(g.Apps)*AppLen }

// CtrOff is the offset of the counters of transaction 0.
func (g Geometry) CtrOff() uint64 { return g.TranOff() + uint64(g.Trans)*TranLen }

// FileLen is the length of the file.
func (g Geometry) FileLen() uint64 { return g.CtrOff() + uint64(g.Trans)*CounterLen }

// Header is the part of the header the daemon writes once.
type Header struct {
	Geometry
	Gen uint64
	PID int32
}

// Encode writes the header into b (at least HeaderLen bytes).
func (h *Header) Encode(b []byte) {
	le := binary.LittleEndian
	copy(b[OffMagic:], Magic)
	le.PutUint16(b[OffMajor:], Version)
	le.PutUint16(b[OffMinor:], 0)
	le.PutUint32(b[OffHdrLen:], HeaderLen)
	le.PutUint32(b[OffSlots:], h.Slots)
	le.PutUint32(b[OffApps:], h.Apps)
	le.PutUint32(b[OffTrans:], h.Trans)
	le.PutUint32(b[OffRecLen:], RecordLen)
	le.PutUint64(b[OffFileLen:], h.FileLen())
	le.PutUint64(b[OffGen:], h.Gen)
	le.PutUint32(b[OffPID:], uint32(h.PID))
}

// DecodeHeader reads and checks a header against the file's real length.
func DecodeHeader(b []byte, fileLen uint64) (Header, error) {
	var h Header
	if len(b) < HeaderLen {
		return h, fmt.Errorf("header: %d bytes, want %d", len(b), HeaderLen)
	}
	le := binary.LittleEndian
	if string(b[:8]) != Magic {
		return h, fmt.Errorf("header: magic %q, want %q", b[:8], Magic)
	}
	if v := le.Uint16(b[OffMajor:]); v != Version {
		return h, fmt.Errorf("header: version %d, want %d", v, Version)
	}
	if n := le.Uint32(b[OffHdrLen:]); n != HeaderLen {
		return h, fmt.Errorf("header: header length %d, want %d", n, HeaderLen)
	}
	if n := le.Uint32(b[OffRecLen:]); n != RecordLen {
		return h, fmt.Errorf("header: record length %d, want %d", n, RecordLen)
	}
	h.Slots, h.Apps, h.Trans = le.Uint32(b[OffSlots:]), le.Uint32(b[OffApps:]), le.Uint32(b[OffTrans:])
	if err := h.Check(); err != nil {
		return h, fmt.Errorf("header: %w", err)
	}
	if n := le.Uint64(b[OffFileLen:]); n != h.FileLen() || n != fileLen {
		return h, fmt.Errorf("header: file length %d, geometry needs %d, file has %d", n, h.FileLen(), fileLen)
	}
	h.Gen = le.Uint64(b[OffGen:])
	if h.Gen == 0 {
		return h, fmt.Errorf("header: generation 0")
	}
	h.PID = int32(le.Uint32(b[OffPID:]))
	return h, nil
}
