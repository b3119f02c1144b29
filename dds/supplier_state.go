package dds

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/internal/unixsock"
)

// supplier is one registered connection and its mapped file.
type supplier struct {
	id     uint64
	conn   *net.UnixConn
	peer   unixsock.Peer // who registered it (SO_PEERCRED)
	init   *ddswire.Init
	vendor ddswire.Vendor
	slots  *Slots     // guarded by registry.mu
	ncx    int        // live contexts, guarded by registry.mu
	tmpls  []*statSet // by template, made at Init; guarded by registry.mu
	gone   bool       // removed from the registry, guarded by registry.mu

	memMu  sync.RWMutex // readers hold it while touching mem
	mem    []byte       // whole mapping; nil once unmapped
	layout ddswire.Layout

	stamp   ddswire.Stamp // liveness: last stamp and when it changed (watch only)
	stampAt time.Time
	faulted atomic.Bool // a read faulted: remove at the next check
	reads   readWindow  // consumers' reads, for SiShInterval and SiShSubscrib
	window  time.Duration

	valMu      sync.Mutex // one consistent read at a time
	last       *areaCopy  // the last consistent copy of the data area
	lastUpTo   uint64     // the newest context it covers
	spareMu    sync.Mutex
	spares     []*areaCopy // released copies, for pins (at most spareCopies)
	staleSince time.Time   // first of the reads failing in a row
	warned     bool        // an open batch was logged
}

// area runs f on the data area under the read lock; false if unmapped.
func (s *supplier) area(f func(area []byte)) bool {
	s.memMu.RLock()
	defer s.memMu.RUnlock()
	if s.mem == nil {
		return false
	}
	f(s.layout.Area(s.mem))
	return true
}

func (s *supplier) unmap() {
	s.memMu.Lock()
	defer s.memMu.Unlock()
	if s.mem != nil {
		unix.Munmap(s.mem)
		s.mem = nil
	}
}

func (s *supplier) goAway() {
	s.memMu.RLock()
	defer s.memMu.RUnlock()
	if s.mem != nil {
		ddswire.SetGoAway(s.mem)
	}
}

// noteRead records a consumer's read of n values and publishes
// SiShInterval and SiShSubscrib (readWindow says what they mean).
func (s *supplier) noteRead(now time.Time, n int) {
	s.reads.read(now, n, s.window)
	s.publishReads(now)
}

func (s *supplier) publishReads(now time.Time) {
	iv, n := s.reads.values(now, s.window)
	s.area(func([]byte) {
		ddswire.StoreInterval(s.mem, iv)
		ddswire.StoreSubscrib(s.mem, n)
	})
}

// check returns why the supplier is dead, or "".
func (s *supplier) check(now time.Time, timeout time.Duration) string {
	if s.faulted.Load() {
		return "memory fault reading its file"
	}
	var st ddswire.Stamp
	var err error
	if !s.area(func([]byte) { st, err = ddswire.LoadStamp(s.mem) }) {
		return ""
	}
	s.publishReads(now) // lets both fall to 0 when nobody reads
	switch {
	case err != nil:
		return err.Error()
	case st != s.stamp:
		s.stamp, s.stampAt = st, now
	case now.Sub(s.stampAt) > timeout:
		return fmt.Sprintf("SiShT unchanged for %v", now.Sub(s.stampAt).Round(time.Second))
	}
	return ""
}

func shmErr(format string, args ...any) error {
	return spmierr.Errorf(spmierr.SiShmemFailed, format, args...)
}

// mapShared checks the passed descriptor against the peer and the Init's
// path, maps it shared read-write and validates it. The caller keeps fd.
func mapShared(fd int, m *ddswire.Init, cr unixsock.Peer, lim ddswire.Limits) ([]byte, ddswire.Layout, error) {
	var l ddswire.Layout
	var st, ls unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, l, shmErr("fstat of the passed descriptor: %v", err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return nil, l, shmErr("the passed descriptor is not a regular file")
	case st.Uid != cr.UID:
		return nil, l, shmErr("file %s is owned by uid %d, the supplier runs as uid %d", m.File, st.Uid, cr.UID)
	case st.Size < ddswire.HeaderSize || st.Size > lim.MaxFileLen():
		return nil, l, shmErr("file %s is %d bytes, want %d..%d", m.File, st.Size, ddswire.HeaderSize, lim.MaxFileLen())
	}
	if err := unix.Lstat(m.File, &ls); err != nil {
		return nil, l, shmErr("lstat %s: %v", m.File, err)
	}
	switch {
	case ls.Mode&unix.S_IFMT == unix.S_IFLNK:
		return nil, l, shmErr("%s is a symbolic link", m.File)
	case ls.Mode&unix.S_IFMT != unix.S_IFREG || ls.Dev != st.Dev || ls.Ino != st.Ino:
		return nil, l, shmErr("%s is not the file whose descriptor was passed", m.File)
	}
	mem, err := unix.Mmap(fd, 0, int(st.Size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, l, shmErr("mmap %s: %v", m.File, err)
	}
	l, err = ddswire.ValidateFile(mem, ddswire.ExpectFor(m, cr.PID, ddswire.ProcStart(cr.PID)), lim)
	if err != nil {
		unix.Munmap(mem)
		return nil, l, err
	}
	return mem, l, nil
}
