package ddsclient

import (
	"math"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
)

// fake is a minimal daemon: it accepts registrations on a temp socket,
// validates the file it receives, and answers AddCx, DelCx and Exit.
type fake struct {
	t    testing.TB
	sock string
	ln   *net.UnixListener

	mu      sync.Mutex
	inits   []*ddswire.Init
	mem     []byte // the last registration's mapping
	layout  ddswire.Layout
	slots   *slots
	conn    *net.UnixConn
	handled chan struct{} // closed once conn's handler is done with it
	addErr  error         // reply to the next AddCx
	got     []ddswire.Message
	exited  chan struct{}
	initErr error
}

func newFake(t testing.TB) *fake {
	t.Helper()
	f := &fake{t: t, sock: filepath.Join(t.TempDir(), "dds.sock"), exited: make(chan struct{}, 4)}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: f.sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	f.ln = ln
	go f.serve()
	t.Cleanup(func() {
		ln.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.conn != nil {
			f.conn.Close()
		}
		if f.mem != nil {
			unix.Munmap(f.mem)
		}
	})
	return f
}

func (f *fake) serve() {
	for {
		c, err := f.ln.AcceptUnix()
		if err != nil {
			return
		}
		done := make(chan struct{})
		f.mu.Lock()
		f.conn, f.handled = c, done
		f.mu.Unlock()
		f.handle(c)
		close(done)
	}
}

// readInit reads the first frame and the descriptor sent with it.
func readInit(c *net.UnixConn) (*ddswire.Init, int, error) {
	m, fds, err := ddswire.RecvMessage(c, ddswire.Limits{}, time.Minute)
	if len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		if err == nil {
			err = spmierr.Errorf(spmierr.SiShmemFailed, "want one descriptor, got %d", len(fds))
		}
		return nil, -1, err
	}
	fd := fds[0]
	if err != nil {
		return nil, fd, err
	}
	in, ok := m.(*ddswire.Init)
	if !ok {
		return nil, fd, spmierr.Errorf(spmierr.SiNotInit, "first message is %s", m.Type())
	}
	return in, fd, nil
}

func (f *fake) register(c *net.UnixConn) (*ddswire.Init, error) {
	in, fd, err := readInit(c)
	if fd >= 0 {
		defer unix.Close(fd)
	}
	if err != nil {
		return nil, err
	}
	if _, err := ddswire.CheckInit(in, ddswire.Limits{}); err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	mem, err := unix.Mmap(fd, 0, int(st.Size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	l, err := ddswire.ValidateFile(mem, ddswire.ExpectFor(in, int32(os.Getpid()), ddswire.ProcStart(int32(os.Getpid()))), ddswire.Limits{})
	if err != nil {
		unix.Munmap(mem)
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mem != nil {
		unix.Munmap(f.mem)
	}
	f.inits = append(f.inits, in)
	f.mem, f.layout, f.slots = mem, l, newSlots(in.PermLen, in.AreaLen)
	return in, f.initErr
}

func (f *fake) handle(c *net.UnixConn) {
	defer c.Close()
	in, err := f.register(c)
	if ddswire.WriteMessage(c, ddswire.NewReply(ddswire.MsgInit, uint64(len(f.inits)), err), ddswire.Limits{}) != nil || err != nil {
		return
	}
	for {
		m, err := ddswire.ReadMessage(c, ddswire.Limits{})
		if err != nil {
			return
		}
		f.mu.Lock()
		f.got = append(f.got, m)
		var r *ddswire.Reply
		switch m := m.(type) {
		case *ddswire.AddCx:
			err, f.addErr = f.addErr, nil
			off, size := m.Offset, ddswire.SlotSize(&in.Templates[m.Ix])
			switch {
			case err != nil:
			case m.Requested(): // a replay: published as it is, as the daemon does
				err = f.slots.AllocAt(off, size)
			default:
				if off, err = f.slots.Alloc(size); err == nil {
					clear(f.area()[off : off+(size+7)&^7])
				}
			}
			r = ddswire.NewReply(ddswire.MsgAddCx, uint64(off), err)
		case *ddswire.DelCx:
			_, err := f.slots.Release(m.Offset)
			r = ddswire.NewReply(ddswire.MsgDelCx, 0, err)
		case *ddswire.Exit:
			r = ddswire.NewReply(ddswire.MsgExit, 0, nil)
		default:
			r = ddswire.NewReply(m.Type(), 0, spmierr.Errorf(spmierr.SiBadArgument, "unexpected %s", m.Type()))
		}
		f.mu.Unlock()
		if ddswire.WriteMessage(c, r, ddswire.Limits{}) != nil {
			return
		}
		if m.Type() == ddswire.MsgExit {
			f.exited <- struct{}{}
			return
		}
	}
}

func (f *fake) area() []byte { return f.layout.Area(f.mem) }

// read is the value of statistic st at base, as the daemon would read it
// (one atomic load of its 8-byte field).
func (f *fake) read(st *ddswire.Stat, base uint32) value {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	fld := ddswire.FieldOf(st, base)
	if err := fld.Check(uint32(len(f.area()))); err != nil || fld.Size != 8 {
		f.t.Fatalf("field %+v: %v", fld, err)
	}
	bits := atomic.LoadUint64((*uint64)(unsafe.Pointer(&f.area()[fld.Off])))
	return value{bits, fld.Type}
}

// value is a field's bits and source type: the Go library writes
// SiULong, SiLong and SiDouble fields.
type value struct {
	bits uint64
	typ  ddswire.DataType
}

func (v value) Float64() float64 {
	switch v.typ {
	case ddswire.SiDouble:
		return math.Float64frombits(v.bits)
	case ddswire.SiLong:
		return float64(int64(v.bits))
	}
	return float64(v.bits)
}

func (v value) Uint64() uint64 {
	if v.typ == ddswire.SiDouble {
		return uint64(math.Float64frombits(v.bits))
	}
	return v.bits
}

// slots is the daemon's allocation of volatile slots, simplified: first
// fit from the end of the permanent part, 8-aligned.
type slots struct {
	lo, hi uint32
	used   map[uint32]uint32 // offset -> size
}

func newSlots(permLen, areaLen uint32) *slots {
	return &slots{lo: permLen, hi: areaLen, used: map[uint32]uint32{}}
}

func (s *slots) free(off, n uint32) bool {
	if off < s.lo || uint64(off)+uint64(n) > uint64(s.hi) {
		return false
	}
	for o, m := range s.used {
		if off < o+m && o < off+n {
			return false
		}
	}
	return true
}

func (s *slots) Alloc(size uint32) (uint32, error) {
	n := (max(size, 8) + 7) &^ 7
	for off := s.lo; uint64(off)+uint64(n) <= uint64(s.hi); off += 8 {
		if s.free(off, n) {
			s.used[off] = n
			return off, nil
		}
	}
	return 0, spmierr.Errorf(spmierr.SiCallocFailed, "no free %d-byte slot", n)
}

func (s *slots) AllocAt(off, size uint32) error {
	n := (max(size, 8) + 7) &^ 7
	if off%8 != 0 || !s.free(off, n) {
		return spmierr.Errorf(spmierr.SiCallocFailed, "requested slot offset %d (%d bytes) overlaps a slot in use", off, n)
	}
	s.used[off] = n
	return nil
}

func (s *slots) Release(off uint32) (uint32, error) {
	n, ok := s.used[off]
	if !ok {
		return 0, spmierr.Errorf(spmierr.SiNotFound, "no volatile context has its data area at offset %d", off)
	}
	delete(s.used, off)
	return n, nil
}

// drop closes the current connection, as a daemon that restarts does,
// and returns once the supplier can see it closed: the descriptor is
// closed when the handler, blocked reading it, has let go.
func (f *fake) drop() {
	f.mu.Lock()
	c, done := f.conn, f.handled
	f.mu.Unlock()
	c.Close()
	select {
	case <-done:
	case <-time.After(time.Minute):
		f.t.Fatal("the fake daemon's handler did not end after its connection closed")
	}
}
