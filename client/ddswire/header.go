package ddswire

import (
	"bytes"
	"encoding/binary"
)

// Offsets of the SpmiShare fields (libspmi/include/spmi_dds.h). The layout is the
// same on every little-endian ABI: fixed-width fields at offsets that are
// multiples of their size, so 386's 4-byte alignment of 64-bit types
// changes nothing. The daemon's dds/layout_test.go checks the C header
// against these.
const (
	OffMagic    = 0   // char[8] "SPMIDDS\0"
	OffMajor    = 8   // int16 format major version
	OffMinor    = 10  // int16 format minor version
	OffHdrLen   = 12  // uint32 header length (sizeof SpmiShare)
	OffAllocLen = 16  // uint32 file length
	OffAreaOff  = 20  // uint32 data area offset in the file
	OffAreaLen  = 24  // uint32 data area length
	OffPermLen  = 28  // uint32 permanent part of the data area
	OffGen      = 32  // uint64 generation, stored last by the creator
	OffPID      = 40  // int32 creator PID
	OffFlags    = 44  // uint32 reserved, 0
	OffStart    = 48  // uint64 creator start time (/proc/PID/stat field 22)
	OffArea     = 56  // uint64 union with char *SiShArea: the supplier's own pointer
	OffT        = 64  // 16 bytes union with struct timeval SiShT
	OffGoAway   = 80  // uint32 SiShGoAway
	OffInterval = 84  // int32 SiShInterval, milliseconds
	OffSubscrib = 88  // int32 SiShSubscrib
	OffPortNo   = 92  // uint16 SiShPortNo, ignored
	OffPad      = 94  // uint16 reserved
	OffName     = 96  // char[64] SiShName
	OffBatch    = 160 // uint32 SiShBatch: batches begun (minor 1)
	OffBatchEnd = 164 // uint32 SiShBatchEnd: batches ended (minor 1)
	OffReading  = 168 // uint32 SiShReading: odd while the daemon copies (minor 1)
	OffPad2     = 172 // uint32 reserved
	OffRes      = 176 // uint64[10] reserved
	HeaderSize  = 256 // sizeof(SpmiShare)

	LenT    = 16
	LenName = 64
	NumRes  = 10
)

// Magic opens every shared file.
const Magic = "SPMIDDS\x00"

// Format version written in SiShMajor/SiShMinor. A reader accepts any minor
// of its major: minors only add fields in the reserved words. Minor 1 adds
// the batch counters (docs/DDS.md §1, Batches); a minor-0 file is read
// without them.
const (
	FileMajor = 1
	FileMinor = 1
)

// Header mirrors SpmiShare field by field.
type Header struct {
	Magic    [8]byte
	Major    int16
	Minor    int16
	HdrLen   uint32
	AllocLen uint32
	AreaOff  uint32
	AreaLen  uint32
	PermLen  uint32
	Gen      uint64
	PID      int32
	Flags    uint32
	Start    uint64
	Area     uint64
	T        [LenT]byte
	GoAway   uint32
	Interval int32
	Subscrib int32
	PortNo   uint16
	Pad      uint16
	Name     [LenName]byte
	Batch    uint32
	BatchEnd uint32
	Reading  uint32
	Pad2     uint32
	Res      [NumRes]uint64
}

// NewHeader is the header a creator writes for a data area of areaLen
// bytes whose first permLen bytes are the permanent part. Gen is left 0:
// the creator stores it last (StoreGen), after everything else.
func NewHeader(areaLen, permLen uint32, pid int32, start uint64, file string) Header {
	h := Header{
		Major: FileMajor, Minor: FileMinor, HdrLen: HeaderSize,
		AllocLen: HeaderSize + areaLen, AreaOff: HeaderSize,
		AreaLen: areaLen, PermLen: permLen, PID: pid, Start: start,
	}
	copy(h.Magic[:], Magic)
	copy(h.Name[:LenName-1], file) // truncated, always NUL-terminated
	return h
}

var le = binary.LittleEndian

// Encode writes h into b[:HeaderSize].
func (h *Header) Encode(b []byte) {
	_ = b[HeaderSize-1]
	copy(b[OffMagic:], h.Magic[:])
	le.PutUint16(b[OffMajor:], uint16(h.Major))
	le.PutUint16(b[OffMinor:], uint16(h.Minor))
	le.PutUint32(b[OffHdrLen:], h.HdrLen)
	le.PutUint32(b[OffAllocLen:], h.AllocLen)
	le.PutUint32(b[OffAreaOff:], h.AreaOff)
	le.PutUint32(b[OffAreaLen:], h.AreaLen)
	le.PutUint32(b[OffPermLen:], h.PermLen)
	le.PutUint64(b[OffGen:], h.Gen)
	le.PutUint32(b[OffPID:], uint32(h.PID))
	le.PutUint32(b[OffFlags:], h.Flags)
	le.PutUint64(b[OffStart:], h.Start)
	le.PutUint64(b[OffArea:], h.Area)
	copy(b[OffT:OffT+LenT], h.T[:])
	le.PutUint32(b[OffGoAway:], h.GoAway)
	le.PutUint32(b[OffInterval:], uint32(h.Interval))
	le.PutUint32(b[OffSubscrib:], uint32(h.Subscrib))
	le.PutUint16(b[OffPortNo:], h.PortNo)
	le.PutUint16(b[OffPad:], h.Pad)
	copy(b[OffName:OffName+LenName], h.Name[:])
	le.PutUint32(b[OffBatch:], h.Batch)
	le.PutUint32(b[OffBatchEnd:], h.BatchEnd)
	le.PutUint32(b[OffReading:], h.Reading)
	le.PutUint32(b[OffPad2:], h.Pad2)
	for i, r := range h.Res {
		le.PutUint64(b[OffRes+8*i:], r)
	}
}

// DecodeHeader reads b[:HeaderSize], which must be that long. It checks
// nothing: ValidateFile does. On a live mapping the fields the supplier or
// daemon change later are a snapshot; use the accessors in live.go for them.
func DecodeHeader(b []byte) Header {
	_ = b[HeaderSize-1]
	var h Header
	copy(h.Magic[:], b[OffMagic:])
	h.Major = int16(le.Uint16(b[OffMajor:]))
	h.Minor = int16(le.Uint16(b[OffMinor:]))
	h.HdrLen = le.Uint32(b[OffHdrLen:])
	h.AllocLen = le.Uint32(b[OffAllocLen:])
	h.AreaOff = le.Uint32(b[OffAreaOff:])
	h.AreaLen = le.Uint32(b[OffAreaLen:])
	h.PermLen = le.Uint32(b[OffPermLen:])
	h.Gen = le.Uint64(b[OffGen:])
	h.PID = int32(le.Uint32(b[OffPID:]))
	h.Flags = le.Uint32(b[OffFlags:])
	h.Start = le.Uint64(b[OffStart:])
	h.Area = le.Uint64(b[OffArea:])
	copy(h.T[:], b[OffT:OffT+LenT])
	h.GoAway = le.Uint32(b[OffGoAway:])
	h.Interval = int32(le.Uint32(b[OffInterval:]))
	h.Subscrib = int32(le.Uint32(b[OffSubscrib:]))
	h.PortNo = le.Uint16(b[OffPortNo:])
	h.Pad = le.Uint16(b[OffPad:])
	copy(h.Name[:], b[OffName:OffName+LenName])
	h.Batch = le.Uint32(b[OffBatch:])
	h.BatchEnd = le.Uint32(b[OffBatchEnd:])
	h.Reading = le.Uint32(b[OffReading:])
	h.Pad2 = le.Uint32(b[OffPad2:])
	for i := range h.Res {
		h.Res[i] = le.Uint64(b[OffRes+8*i:])
	}
	return h
}

// FileName is SiShName up to its first NUL (informational only).
func (h *Header) FileName() string {
	n := h.Name[:]
	if i := bytes.IndexByte(n, 0); i >= 0 {
		n = n[:i]
	}
	return string(n)
}
