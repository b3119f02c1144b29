package dds

import (
	"runtime/debug"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/perfagent/subagent/spmi"
)

// liveSup serves one supplier's statistics as live ones (spmi.LiveSource):
// nothing is copied at refresh; a request pins a consistent copy of the
// supplier's data area and decodes the values it asks for from that copy.
// One is made per supplier each time the DDS part of the tree is rebuilt.
type liveSup struct {
	sup    *supplier
	reg    *registry
	fields []Field  // by field index (Builder.LiveStat)
	cxIDs  []uint64 // the registry id of each field's context
	maxID  uint64   // the newest context among them
}

// Pin implements spmi.LiveSource.
func (l *liveSup) Pin() spmi.LivePin {
	buf, upTo := l.sup.pin(l, time.Now())
	return &areaPin{buf: buf, upTo: upTo, l: l}
}

// areaPin is one request's view of a copy of the data area.
type areaPin struct {
	buf  *areaCopy // nil: no values (unmapped, faulted, never consistent)
	upTo uint64    // contexts with a larger id were not in the copy: no value
	l    *liveSup
	done bool
}

// Value implements spmi.LivePin.
func (p *areaPin) Value(i uint32) spmi.Value {
	if p.buf == nil || p.done || int(i) >= len(p.l.fields) || p.l.cxIDs[i] > p.upTo {
		return spmi.NoValue
	}
	return decode(p.buf.words, p.l.fields[i])
}

// Release implements spmi.LivePin: the request is answered, the copy may
// be reused.
func (p *areaPin) Release() {
	if p.buf != nil && !p.done {
		p.done = true
		p.buf.release()
	}
}

// areaCopy is a copy of a supplier's data area, immutable once made and
// shared by the requests that pinned it and by the supplier as its last
// consistent copy; the last of them to release it puts it back in the
// supplier's pool, so that a walk of a large supplier does not allocate
// a copy of its area for every request.
type areaCopy struct {
	words []uint64
	refs  atomic.Int32
	sup   *supplier
}

func (c *areaCopy) release() {
	if c.refs.Add(-1) == 0 {
		c.sup.copies.Put(c)
	}
}

// newCopy takes a buffer of n words from the pool (or a new one), held
// once.
func (s *supplier) newCopy(n int) *areaCopy {
	c, _ := s.copies.Get().(*areaCopy)
	if c == nil || len(c.words) != n {
		c = &areaCopy{words: make([]uint64, n), sup: s}
	}
	c.refs.Store(1)
	return c
}

// decode reads field f from a private copy of the area: plain loads, the
// same bit layout ReadValue reads from the mapping.
func decode(words []uint64, f Field) spmi.Value {
	off, size := uint64(f.Off), uint64(f.Size)
	if off+size > uint64(len(words))*8 || f.Check(uint32(len(words)*8)) != nil {
		return spmi.NoValue
	}
	var x, y uint64
	switch size {
	case 16:
		x, y = words[off/8], words[off/8+1]
	case 8:
		x = words[off/8]
	default:
		x = words[off/8] >> (8 * (off & 7)) // little-endian
		x &= 1<<(8*size) - 1
	}
	return present(f, x, y)
}

// pin copies the data area, consistently (ReadConsistent) for a file of
// minor 1 or later. When no moment without an open batch is found, the
// last consistent copy is served instead, counted in reg.stale; it holds
// no value for the contexts registered after it was taken (upTo: the
// newest one it covers), whose slots may then have held another's. Reads
// failing for reg.staleWarn on end mean a batch left open, which is
// logged once per supplier. A memory fault gives no values and marks s
// for removal. The copy returned is held once for the caller.
func (s *supplier) pin(l *liveSup, now time.Time) (c *areaCopy, upTo uint64) {
	reg := l.reg
	s.valMu.Lock()
	defer s.valMu.Unlock()
	if s.faulted.Load() {
		return nil, 0
	}
	ok := true
	var err error
	mapped := s.area(func(area []byte) {
		c = s.newCopy(len(area) / 8)
		if !s.layout.Batches {
			err = copyWords(c.words, area) // a minor-0 file: read as it is
			return
		}
		ok, err = ReadConsistent(s.mem, func() error { return copyWords(c.words, area) })
	})
	switch {
	case !mapped:
		return nil, 0
	case err != nil:
		c.release()
		if !s.faulted.Swap(true) {
			reg.log.Warn("dds: reading the supplier's file faulted; it will be removed", "pid", s.pid, "vendor", s.vendor.Name, "err", err)
		}
		reg.notifyFault()
		return nil, 0
	}
	s.noteRead(now, len(l.fields))
	if ok {
		c.refs.Add(1) // the supplier's, as its last consistent copy
		if s.last != nil {
			s.last.release()
		}
		s.staleSince, s.last, s.lastUpTo = time.Time{}, c, l.maxID
		return c, ^uint64(0)
	}
	n := len(c.words)
	c.release()
	reg.stale.Add(1)
	if s.staleSince.IsZero() {
		s.staleSince = now
	}
	if !s.warned && now.Sub(s.staleSince) >= reg.staleWarn {
		s.warned = true
		var begun, ended uint32
		s.area(func([]byte) { begun, ended, _ = LoadBatches(s.mem) })
		reg.log.Warn("dds: a batch of the supplier stays open (SpmiDdsBegin or Update without its end?); "+
			"serving its last consistent values (logged once per supplier)",
			"pid", s.pid, "vendor", s.vendor.Name, "since", now.Sub(s.staleSince).Round(time.Millisecond),
			"SiShBatch", begun, "SiShBatchEnd", ended)
	}
	if s.last == nil || len(s.last.words) != n {
		return nil, 0
	}
	s.last.refs.Add(1)
	return s.last, s.lastUpTo
}

// copyWords copies area into dst with one aligned atomic load per word, so
// no value written alone is torn; a fault (a file truncated by its owner)
// is returned as SiShmemFailed. area starts 8-aligned and is a multiple of
// 8 long (ValidateFile).
func copyWords(dst []uint64, area []byte) (err error) {
	if len(area)%8 != 0 || uintptr(unsafe.Pointer(unsafe.SliceData(area)))%8 != 0 {
		return spmi.Errorf(spmi.SiShmemFailed, "data area of %d bytes is not 8-aligned", len(area))
	}
	if len(area) == 0 {
		return nil
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer guard(&err)
	src := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(area))), len(area)/8)
	for i := range dst {
		dst[i] = atomic.LoadUint64(&src[i])
	}
	return nil
}
