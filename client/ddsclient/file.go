package ddsclient

import (
	"errors"
	"math/rand/v2"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
)

// shm is the supplier's shared file and its mapping.
type shm struct {
	f        *os.File
	mem      []byte // whole file
	area     []byte // data area
	path     string
	dev, ino uint64 // to unlink only the file we created
	inPlace  bool   // an existing file reused: never unlinked

	// Batch counters in the header (docs/DDS.md §1, Batches).
	begun, ended, reading *uint32
	ignored               atomic.Uint32 // an odd SiShReading that outlasted WriterHoldOff
}

func ownRegular(f *os.File) bool {
	var st unix.Stat_t
	return unix.Fstat(int(f.Fd()), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && int(st.Uid) == os.Geteuid()
}

func shmErr(format string, args ...any) error {
	return spmierr.Errorf(spmierr.SiShmemFailed, format, args...)
}

// createShm creates the shared file for the area described by m, maps it
// and writes the header; the caller publishes it with newGen.
func createShm(path string, m *ddswire.Init) (*shm, error) {
	if !isAbs(path) {
		return nil, spmierr.Errorf(spmierr.SiBadArgument, "shared file %q: the path must be absolute", path)
	}
	// A stale file of ours is unlinked: a new layout is a new inode.
	var st unix.Stat_t
	if unix.Lstat(path, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && int(st.Uid) == os.Geteuid() {
		_ = os.Remove(path)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	inPlace := false
	if errors.Is(err, os.ErrPermission) || errors.Is(err, os.ErrExist) {
		// The directory is not writable but our file is: rewrite it in
		// place; the new generation tells the contents apart.
		if g, err2 := os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0); err2 == nil {
			if ownRegular(g) {
				f, err, inPlace = g, nil, true
			} else {
				g.Close()
			}
		}
	}
	if err != nil {
		return nil, shmErr("shared file: %v", err)
	}
	s := &shm{f: f, path: path, inPlace: inPlace}
	size := ddswire.HeaderSize + int(m.AreaLen)
	if err := s.setup(size, m); err != nil {
		s.close(true)
		return nil, err
	}
	return s, nil
}

func (s *shm) setup(size int, m *ddswire.Init) error {
	if err := s.f.Truncate(int64(size)); err != nil {
		return shmErr("shared file: %v", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(s.f.Fd()), &st); err != nil {
		return shmErr("shared file: %v", err)
	}
	s.dev, s.ino = uint64(st.Dev), st.Ino
	mem, err := unix.Mmap(int(s.f.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return shmErr("mmap %s: %v", s.path, err)
	}
	s.mem = mem
	s.area = mem[ddswire.HeaderSize:]
	s.begun = (*uint32)(unsafe.Pointer(&mem[ddswire.OffBatch]))
	s.ended = (*uint32)(unsafe.Pointer(&mem[ddswire.OffBatchEnd]))
	s.reading = (*uint32)(unsafe.Pointer(&mem[ddswire.OffReading]))
	h := ddswire.NewHeader(m.AreaLen, m.PermLen, int32(os.Getpid()), ddswire.ProcStart(int32(os.Getpid())), s.path)
	h.Area = uint64(uintptr(unsafe.Pointer(&s.area[0])))
	h.Encode(mem)
	return nil
}

// newGen publishes the header with a fresh nonzero generation, stored last.
func (s *shm) newGen() (uint64, error) {
	old, _ := ddswire.LoadGen(s.mem)
	g := rand.Uint64()
	for g == 0 || g == old {
		g = rand.Uint64()
	}
	return g, ddswire.StoreGen(s.mem, g)
}

// stamp writes SiShT as a native struct timeval with 64-bit members.
func (s *shm) stamp(sec, usec int64) {
	if s.mem == nil {
		return // after Exit
	}
	w := (*[2]uint64)(unsafe.Pointer(&s.mem[ddswire.OffT]))
	atomic.StoreUint64(&w[1], uint64(usec))
	atomic.StoreUint64(&w[0], uint64(sec))
}

// begin opens a batch. While the daemon copies values (SiShReading odd)
// it first lets that copy end, at most ddswire.WriterHoldOff: a writer running
// batches back to back would otherwise keep every copy from being
// consistent.
func (s *shm) begin() {
	if s.mem == nil {
		return // after Exit
	}
	if r := atomic.LoadUint32(s.reading); r&1 != 0 && r != s.ignored.Load() {
		s.holdOff(r)
	}
	atomic.AddUint32(s.begun, 1)
}

func (s *shm) holdOff(r uint32) {
	deadline := time.Now().Add(ddswire.WriterHoldOff)
	for atomic.LoadUint32(s.reading) == r {
		if time.Now().After(deadline) {
			s.ignored.Store(r) // a daemon died while copying: stop waiting for it
			return
		}
		runtime.Gosched()
	}
}

// end closes a batch.
func (s *shm) end() {
	if s.mem != nil {
		atomic.AddUint32(s.ended, 1)
	}
}

func (s *shm) load32(off int) uint32 {
	if s.mem == nil {
		return 0 // after Exit
	}
	return atomic.LoadUint32((*uint32)(unsafe.Pointer(&s.mem[off])))
}

// close unmaps and closes; with remove it unlinks the file if the path
// still names the inode we created.
func (s *shm) close(remove bool) error {
	var errs []error
	if s.mem != nil {
		errs = append(errs, unix.Munmap(s.mem))
		s.mem, s.area = nil, nil
		s.begun, s.ended, s.reading = nil, nil, nil
	}
	if remove && !s.inPlace {
		var st unix.Stat_t
		if unix.Lstat(s.path, &st) == nil && uint64(st.Dev) == s.dev && st.Ino == s.ino {
			errs = append(errs, os.Remove(s.path))
		}
	}
	errs = append(errs, s.f.Close())
	return errors.Join(errs...)
}

func isAbs(p string) bool { return len(p) > 0 && p[0] == '/' }
