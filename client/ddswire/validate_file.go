package ddswire

import (
	"math/bits"
	"runtime/debug"

	"github.com/perfagent/subagent/client/spmierr"
)

// Expect is what the daemon knows about a file before it reads it: the
// generation and sizes from the supplier's Init, the PID from the socket's
// peer credentials and that process's start time. A zero Gen skips the
// comparison with an Init (for tools inspecting a file); a zero PID or
// Start skips that comparison.
type Expect struct {
	Gen     uint64
	AreaLen uint32
	PermLen uint32
	PID     int32
	Start   uint64
}

// ExpectFor is the Expect for a supplier's Init.
func ExpectFor(m *Init, pid int32, start uint64) Expect {
	return Expect{Gen: m.Generation, AreaLen: m.AreaLen, PermLen: m.PermLen, PID: pid, Start: start}
}

// Layout is the validated geometry of one shared file. The daemon keeps it
// and never re-reads these fields: after validation the supplier may
// scribble over its header without moving what the daemon reads.
type Layout struct {
	FileLen uint32
	AreaOff uint32
	AreaLen uint32
	PermLen uint32
	Gen     uint64
	PID     int32
	Start   uint64
	// Batches: the file is of minor version 1 or later, so its batch
	// counters are meaningful (ReadConsistent). A minor-0 file's reserved
	// words are not read.
	Batches bool
}

// Area is the data area of mem, the mapping Layout was validated on; nil
// if mem is shorter than the layout (the caller remapped a smaller file).
func (l Layout) Area(mem []byte) []byte {
	end := uint64(l.AreaOff) + uint64(l.AreaLen)
	if end > uint64(len(mem)) {
		return nil
	}
	return mem[l.AreaOff:end:end]
}

func fileErr(format string, args ...any) error {
	return spmierr.Errorf(spmierr.SiShmemFailed, "shared file: "+format, args...)
}

// ValidateFile checks the header of a shared file mapped whole in b, whose
// length must be the file's real length (fstat), against exp. It trusts no
// field: every size is checked against the real length and the limits, and
// the header is copied once so a supplier changing it meanwhile cannot make
// the checked values differ from the returned ones.
func ValidateFile(b []byte, exp Expect, lim Limits) (l Layout, err error) {
	lim = lim.norm()
	if len(b) < HeaderSize {
		return l, fileErr("%d bytes, shorter than the %d-byte header", len(b), HeaderSize)
	}
	if int64(len(b)) > lim.MaxFileLen() {
		return l, fileErr("%d bytes, more than the %d allowed", len(b), lim.MaxFileLen())
	}
	var h Header
	if err := func() (err error) {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer RecoverFault(&err)
		h = DecodeHeader(b)
		return nil
	}(); err != nil {
		return l, err
	}
	if string(h.Magic[:]) != Magic {
		return l, fileErr("magic %q, want %q: not a DDS shared file", h.Magic[:], Magic)
	}
	if h.Major != FileMajor {
		if bits.ReverseBytes16(uint16(h.Major)) == FileMajor {
			return l, fileErr("written big-endian; the format is little-endian")
		}
		return l, fileErr("format version %d.%d, this daemon reads %d.x", h.Major, h.Minor, FileMajor)
	}
	size := uint64(len(b))
	switch {
	case h.HdrLen < HeaderSize || h.HdrLen > MaxHeader || h.HdrLen%8 != 0:
		return l, fileErr("header length %d, want a multiple of 8 in %d..%d", h.HdrLen, HeaderSize, MaxHeader)
	case uint64(h.AllocLen) != size:
		return l, fileErr("header says %d bytes, the file has %d (resized?)", h.AllocLen, size)
	case h.AreaOff%8 != 0 || h.AreaOff < h.HdrLen:
		return l, fileErr("data area offset %d, want a multiple of 8 from the header length %d on", h.AreaOff, h.HdrLen)
	case h.AreaLen%8 != 0 || h.AreaLen == 0:
		return l, fileErr("data area length %d, want a nonzero multiple of 8", h.AreaLen)
	case h.AreaLen > lim.MaxArea:
		return l, fileErr("data area length %d, more than the %d allowed", h.AreaLen, lim.MaxArea)
	case uint64(h.AreaOff)+uint64(h.AreaLen) > size:
		return l, fileErr("data area [%d, +%d) ends past the %d-byte file", h.AreaOff, h.AreaLen, size)
	case h.PermLen%8 != 0 || h.PermLen > h.AreaLen:
		return l, fileErr("permanent length %d, want a multiple of 8 up to the area length %d", h.PermLen, h.AreaLen)
	case h.Gen == 0:
		return l, fileErr("generation 0: the header was never published")
	}
	if exp.Gen != 0 {
		switch {
		case h.Gen != exp.Gen:
			return l, fileErr("generation %#x, the registration says %#x (stale or foreign file)", h.Gen, exp.Gen)
		case h.AreaLen != exp.AreaLen:
			return l, fileErr("data area length %d, the registration says %d", h.AreaLen, exp.AreaLen)
		case h.PermLen != exp.PermLen:
			return l, fileErr("permanent length %d, the registration says %d", h.PermLen, exp.PermLen)
		}
	}
	if exp.PID != 0 && h.PID != exp.PID {
		return l, fileErr("created by PID %d, the registering process is %d", h.PID, exp.PID)
	}
	if exp.Start != 0 && h.Start != exp.Start {
		return l, fileErr("creator start time %d, PID %d started at %d (PID reused?)", h.Start, h.PID, exp.Start)
	}
	return Layout{
		FileLen: h.AllocLen, AreaOff: h.AreaOff, AreaLen: h.AreaLen, PermLen: h.PermLen,
		Gen: h.Gen, PID: h.PID, Start: h.Start, Batches: h.Minor >= 1,
	}, nil
}
