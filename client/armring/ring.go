package armring

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

// File is a mapped file: its bytes and geometry. The word fields are read
// and written with atomics; the mapping is 8-aligned (a page) and every
// word sits at a multiple of its size.
type File struct {
	mem []byte
	g   Geometry
}

// NewFile wraps a mapping of g.FileLen() bytes.
func NewFile(mem []byte, g Geometry) (*File, error) {
	if err := g.Check(); err != nil {
		return nil, err
	}
	if uint64(len(mem)) != g.FileLen() {
		return nil, fmt.Errorf("mapping of %d bytes, geometry needs %d", len(mem), g.FileLen())
	}
	if uintptr(unsafe.Pointer(unsafe.SliceData(mem)))%8 != 0 {
		return nil, fmt.Errorf("mapping is not 8-byte aligned")
	}
	return &File{mem: mem, g: g}, nil
}

// Geometry is the file's shape.
func (f *File) Geometry() Geometry { return f.g }

// Bytes is the whole mapping.
func (f *File) Bytes() []byte { return f.mem }

func (f *File) u64(off uint64) *uint64 { return (*uint64)(unsafe.Pointer(&f.mem[off])) }
func (f *File) u32(off uint64) *uint32 { return (*uint32)(unsafe.Pointer(&f.mem[off])) }

// InitSlots gives every ring slot its first sequence number (the daemon,
// once, on a new file).
func (f *File) InitSlots() {
	for i := range uint64(f.g.Slots) {
		atomic.StoreUint64(f.u64(f.g.RingOff()+i*RecordLen), i)
	}
}

func (f *File) slot(pos uint64) uint64 {
	return f.g.RingOff() + (pos&uint64(f.g.Slots-1))*RecordLen
}

// maxSpins bounds a producer's retries, so that a corrupt ring can never
// hold an application in a loop.
const maxSpins = 64

// Post appends r to the ring: false when the ring is full (or contended
// beyond maxSpins), in which case the caller counts the record as dropped.
func (f *File) Post(r *Record) bool {
	head := f.u64(OffHead)
	pos := atomic.LoadUint64(head)
	for range maxSpins {
		off := f.slot(pos)
		seq := atomic.LoadUint64(f.u64(off))
		switch d := int64(seq - pos); {
		case d == 0:
			if atomic.CompareAndSwapUint64(head, pos, pos+1) {
				r.encode(f.mem[off : off+RecordLen])
				atomic.StoreUint64(f.u64(off), pos+1)
				return true
			}
			pos = atomic.LoadUint64(head)
		case d < 0:
			return false
		default:
			pos = atomic.LoadUint64(head)
		}
	}
	return false
}

// Drain hands at most max ready records, in order from tail, to fn (a
// copy of the slot, valid during the call) and frees their slots. It
// returns the new tail, which it also stores in the header for a daemon
// that takes the file over.
func (f *File) Drain(tail uint64, max int, fn func([]byte)) uint64 {
	var buf [RecordLen]byte
	for range max {
		off := f.slot(tail)
		if atomic.LoadUint64(f.u64(off)) != tail+1 {
			break
		}
		copy(buf[:], f.mem[off:off+RecordLen])
		atomic.StoreUint64(f.u64(off), tail+uint64(f.g.Slots))
		fn(buf[:])
		tail++
	}
	atomic.StoreUint64(f.u64(OffTail), tail)
	return tail
}

// Undrained counts, per transaction index, the records posted but not
// drained; a process calls it on the file of a daemon that went away, to
// count them as lost in the next one.
func (f *File) Undrained(fn func(tran uint32)) {
	tail := atomic.LoadUint64(f.u64(OffTail))
	head := atomic.LoadUint64(f.u64(OffHead))
	if head-tail > uint64(f.g.Slots) {
		return
	}
	for pos := tail; pos != head; pos++ {
		off := f.slot(pos)
		if atomic.LoadUint64(f.u64(off)) == pos+1 {
			fn(atomic.LoadUint32(f.u32(off + recOffTran)))
		}
	}
}

// Head is the producers' cursor.
func (f *File) Head() uint64 { return atomic.LoadUint64(f.u64(OffHead)) }

func (f *File) appOff(i uint32) uint64  { return f.g.AppOff() + uint64(i)*AppLen }
func (f *File) tranOff(i uint32) uint64 { return f.g.TranOff() + uint64(i)*TranLen }
func (f *File) ctrOff(i uint32) uint64  { return f.g.CtrOff() + uint64(i)*CounterLen }

// PublishApp writes application entry i and publishes it.
func (f *File) PublishApp(i uint32, a *App) {
	off := f.appOff(i)
	EncodeApp(f.mem[off:off+AppLen], a)
	atomic.StoreUint32(f.u32(off), StatePublished)
}

// PublishTran writes transaction entry i and publishes it.
func (f *File) PublishTran(i uint32, t *Tran) {
	off := f.tranOff(i)
	EncodeTran(f.mem[off:off+TranLen], t)
	atomic.StoreUint32(f.u32(off), StatePublished)
}

// AppEntry returns a copy of application entry i once published.
func (f *File) AppEntry(i uint32, buf *[AppLen]byte) bool {
	off := f.appOff(i)
	if atomic.LoadUint32(f.u32(off)) != StatePublished {
		return false
	}
	copy(buf[:], f.mem[off:off+AppLen])
	return true
}

// SetAppVerdict is the daemon's answer to application entry i
// (VerdictRegistered or VerdictRefused), for the process to read.
func (f *File) SetAppVerdict(i uint32, v int32) {
	atomic.StoreUint32(f.u32(f.appOff(i)+appOffVerdict), uint32(v))
}

// AppVerdict is the daemon's answer to application entry i so far.
func (f *File) AppVerdict(i uint32) int32 {
	return int32(atomic.LoadUint32(f.u32(f.appOff(i) + appOffVerdict)))
}

// TranEntry returns a copy of transaction entry i once published.
func (f *File) TranEntry(i uint32, buf *[TranLen]byte) bool {
	off := f.tranOff(i)
	if atomic.LoadUint32(f.u32(off)) != StatePublished {
		return false
	}
	copy(buf[:], f.mem[off:off+TranLen])
	return true
}

// AddInflight changes transaction i's count of started, unfinished instances.
func (f *File) AddInflight(i uint32, d int64) {
	atomic.AddUint64(f.u64(f.ctrOff(i)), uint64(d))
}

// AddDropped counts records of transaction i that could not be posted.
func (f *File) AddDropped(i uint32, n uint64) { atomic.AddUint64(f.u64(f.ctrOff(i)+8), n) }

// Counters reads transaction i's in-flight and dropped counts.
func (f *File) Counters(i uint32) (inflight int64, dropped uint64) {
	off := f.ctrOff(i)
	return int64(atomic.LoadUint64(f.u64(off))), atomic.LoadUint64(f.u64(off + 8))
}

// AddBadBuffer counts a data buffer refused by the parser.
func (f *File) AddBadBuffer() { atomic.AddUint64(f.u64(OffBadBuf), 1) }

// AddNoSlot counts an instance that could not be measured.
func (f *File) AddNoSlot() { atomic.AddUint64(f.u64(OffNoSlot), 1) }

// Errors reads the refused-buffer and unmeasured-instance counts.
func (f *File) Errors() (badBuf, noSlot uint64) {
	return atomic.LoadUint64(f.u64(OffBadBuf)), atomic.LoadUint64(f.u64(OffNoSlot))
}
