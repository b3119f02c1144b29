package client

import (
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/dds"
	"github.com/perfagent/subagent/spmi"
)

// fake is a minimal daemon: it accepts registrations on a temp socket,
// validates the file it receives, and answers AddCx, DelCx and Exit.
type fake struct {
	t    testing.TB
	sock string
	ln   *net.UnixListener

	mu      sync.Mutex
	inits   []*dds.Init
	mem     []byte // the last registration's mapping
	layout  dds.Layout
	slots   *dds.Slots
	conn    *net.UnixConn
	addErr  error // reply to the next AddCx
	got     []dds.Message
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
		f.mu.Lock()
		f.conn = c
		f.mu.Unlock()
		f.handle(c)
	}
}

// readInit reads the first frame and the descriptor sent with it.
func readInit(c *net.UnixConn) (*dds.Init, int, error) {
	m, fds, err := dds.RecvMessage(c, dds.Limits{}, 5*time.Second)
	if len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		if err == nil {
			err = spmi.Errorf(spmi.SiShmemFailed, "want one descriptor, got %d", len(fds))
		}
		return nil, -1, err
	}
	fd := fds[0]
	if err != nil {
		return nil, fd, err
	}
	in, ok := m.(*dds.Init)
	if !ok {
		return nil, fd, spmi.Errorf(spmi.SiNotInit, "first message is %s", m.Type())
	}
	return in, fd, nil
}

func (f *fake) register(c *net.UnixConn) (*dds.Init, error) {
	in, fd, err := readInit(c)
	if fd >= 0 {
		defer unix.Close(fd)
	}
	if err != nil {
		return nil, err
	}
	if _, err := dds.CheckInit(in, dds.Limits{}); err != nil {
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
	l, err := dds.ValidateFile(mem, dds.ExpectFor(in, int32(os.Getpid()), dds.ProcStart(int32(os.Getpid()))), dds.Limits{})
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
	f.mem, f.layout, f.slots = mem, l, dds.NewSlots(in.PermLen, in.AreaLen)
	return in, f.initErr
}

func (f *fake) handle(c *net.UnixConn) {
	defer c.Close()
	in, err := f.register(c)
	if dds.WriteMessage(c, dds.NewReply(dds.MsgInit, uint64(len(f.inits)), err), dds.Limits{}) != nil || err != nil {
		return
	}
	for {
		m, err := dds.ReadMessage(c, dds.Limits{})
		if err != nil {
			return
		}
		f.mu.Lock()
		f.got = append(f.got, m)
		var r *dds.Reply
		switch m := m.(type) {
		case *dds.AddCx:
			err, f.addErr = f.addErr, nil
			off, size := m.Offset, dds.SlotSize(&in.Templates[m.Ix])
			switch {
			case err != nil:
			case m.Requested(): // a replay: published as it is, as the daemon does
				err = f.slots.AllocAt(off, size)
			default:
				if off, err = f.slots.Alloc(size); err == nil {
					err = dds.ZeroSlot(f.area(), off, size)
				}
			}
			r = dds.NewReply(dds.MsgAddCx, uint64(off), err)
		case *dds.DelCx:
			_, err := f.slots.Release(m.Offset)
			r = dds.NewReply(dds.MsgDelCx, 0, err)
		case *dds.Exit:
			r = dds.NewReply(dds.MsgExit, 0, nil)
		default:
			r = dds.NewReply(m.Type(), 0, spmi.Errorf(spmi.SiBadArgument, "unexpected %s", m.Type()))
		}
		f.mu.Unlock()
		if dds.WriteMessage(c, r, dds.Limits{}) != nil {
			return
		}
		if m.Type() == dds.MsgExit {
			f.exited <- struct{}{}
			return
		}
	}
}

func (f *fake) area() []byte { return f.layout.Area(f.mem) }

// read is what the daemon would serve for statistic st at base.
func (f *fake) read(st *dds.Stat, base uint32) spmi.Value {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	v, err := dds.ReadValue(f.area(), dds.FieldOf(st, base))
	if err != nil {
		f.t.Fatal(err)
	}
	return v
}

// drop closes the current connection, as a daemon that restarts does.
func (f *fake) drop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.conn.Close()
}
