package dds

import (
	"runtime/debug"
	"sort"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

// liveSup serves one supplier's statistics as live ones (spmi.LiveSource):
// nothing is copied at refresh; a request pins a consistent copy of the
// supplier's data area and decodes the values it asks for from that copy.
// One is made per supplier each time the DDS part of the tree is rebuilt.
type liveSup struct {
	sup   *supplier
	reg   *registry
	cxs   []liveCx // by first field: each context's block (Builder.LiveBlock)
	n     uint32   // fields in all
	maxID uint64   // the newest context among them
}

// liveCx is one context's statistics: fields first, first+1, ... of its
// supplier are those of stats, in its order, at the context's base.
type liveCx struct {
	stats       *statSet
	id          uint64 // the context's registry id
	first, base uint32
}

// holds reports whether field i is one of c's.
func (c *liveCx) holds(i uint32) bool {
	return i >= c.first && i-c.first < uint32(len(c.stats.fields))
}

// Pin implements spmi.LiveSource.
func (l *liveSup) Pin() spmi.LivePin {
	buf, upTo := l.sup.pin(l, l.reg.now())
	return &areaPin{buf: buf, upTo: upTo, l: l}
}

// areaPin is one request's view of a copy of the data area.
type areaPin struct {
	buf  *areaCopy // nil: no values (unmapped, faulted, never consistent)
	upTo uint64    // contexts with a larger id were not in the copy: no value
	l    *liveSup
	at   int // the index in l.cxs of the context read last
	done bool
}

// Value implements spmi.LivePin.
func (p *areaPin) Value(i uint32) spmiwire.Value {
	if p.buf == nil || p.done {
		return spmiwire.NoValue
	}
	c := p.cx(i)
	if c == nil || c.id > p.upTo {
		return spmiwire.NoValue
	}
	f := c.stats.fields[i-c.first]
	f.Off += c.base
	return decode(p.buf.words, f)
}

// cx is the context whose block holds field i, nil if none. A walk reads
// a context's fields in order, then the next context's: those two are
// tried before a binary search.
func (p *areaPin) cx(i uint32) *liveCx {
	cs := p.l.cxs
	for k := p.at; k < len(cs) && k <= p.at+1; k++ {
		if cs[k].holds(i) {
			p.at = k
			return &cs[k]
		}
	}
	k := sort.Search(len(cs), func(k int) bool { return cs[k].first > i }) - 1
	if k < 0 || !cs[k].holds(i) {
		return nil
	}
	p.at = k
	return &cs[k]
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
// consistent copy; the last of them to release it gives it back to the
// supplier's spares, so that a walk of a large supplier does not allocate
// a copy of its area for every request.
type areaCopy struct {
	words []uint64
	refs  atomic.Int32
	sup   *supplier
}

func (c *areaCopy) release() {
	if c.refs.Add(-1) == 0 {
		c.sup.spare(c)
	}
}

// spareCopies bounds the copies a supplier keeps for reuse: a walk
// releases each request's copy before the next, so a few suffice. (A
// sync.Pool kept every copy an AgentX session's 32 cached transactions
// had held, two collections long: 80 MB more during a walk of a million
// statistics through snmpd.)
const spareCopies = 2

func (s *supplier) spare(c *areaCopy) {
	s.spareMu.Lock()
	if len(s.spares) < spareCopies {
		s.spares = append(s.spares, c)
	}
	s.spareMu.Unlock()
}

// newCopy takes a buffer of n words from the spares (or a new one), held
// once.
func (s *supplier) newCopy(n int) *areaCopy {
	var c *areaCopy
	s.spareMu.Lock()
	if k := len(s.spares); k > 0 {
		c, s.spares = s.spares[k-1], s.spares[:k-1]
	}
	s.spareMu.Unlock()
	if c == nil || len(c.words) != n {
		c = &areaCopy{words: make([]uint64, n), sup: s}
	}
	c.refs.Store(1)
	return c
}

// decode reads field f from a private copy of the area: plain loads, the
// same bit layout ReadValue reads from the mapping.
func decode(words []uint64, f ddswire.Field) spmiwire.Value {
	off, size := uint64(f.Off), uint64(f.Size)
	if off+size > uint64(len(words))*8 || f.Check(uint32(len(words)*8)) != nil {
		return spmiwire.NoValue
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
	// With no consistent copy holding all of l's contexts to fall back on,
	// an open batch is waited for, briefly, and not again until a read
	// is consistent: a supplier stuck in a batch costs one wait.
	var wait time.Duration
	if (s.last == nil || s.lastUpTo < l.maxID) && s.staleSince.IsZero() {
		wait = ReadWait
	}
	mapped := s.area(func(area []byte) {
		c = s.newCopy(len(area) / 8)
		if !s.layout.Batches {
			err = copyWords(c.words, area) // a minor-0 file: read as it is
			return
		}
		ok, err = ReadConsistent(s.mem, wait, func() error { return copyWords(c.words, area) })
	})
	switch {
	case !mapped:
		return nil, 0
	case err != nil:
		c.release()
		if !s.faulted.Swap(true) {
			reg.log.Warn("dds: reading the supplier's file faulted; it will be removed", "pid", s.peer.PID, "vendor", s.vendor.Name, "err", err)
		}
		reg.notifyFault()
		return nil, 0
	}
	s.noteRead(now, int(l.n))
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
			"pid", s.peer.PID, "vendor", s.vendor.Name, "since", now.Sub(s.staleSince).Round(time.Millisecond),
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
		return spmierr.Errorf(spmierr.SiShmemFailed, "data area of %d bytes is not 8-aligned", len(area))
	}
	if len(area) == 0 {
		return nil
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer ddswire.RecoverFault(&err)
	src := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(area))), len(area)/8)
	for i := range dst {
		dst[i] = atomic.LoadUint64(&src[i])
	}
	return nil
}
