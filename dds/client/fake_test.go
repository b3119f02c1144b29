package client

import (
	"bytes"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"

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
	head := make([]byte, 8)
	oob := make([]byte, unix.CmsgSpace(4*4))
	n, oobn, _, _, err := c.ReadMsgUnix(head, oob)
	if err != nil {
		return nil, -1, err
	}
	fd := -1
	cms, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(cms) != 1 {
		return nil, -1, spmi.Errorf(spmi.SiShmemFailed, "control messages: %v", err)
	}
	fds, err := unix.ParseUnixRights(&cms[0])
	if err != nil || len(fds) != 1 {
		return nil, -1, spmi.Errorf(spmi.SiShmemFailed, "want one descriptor, got %d", len(fds))
	}
	fd = fds[0]
	if _, err := io.ReadFull(c, head[n:]); err != nil {
		return nil, fd, err
	}
	t, body, err := dds.ReadFrame(io.MultiReader(bytes.NewReader(head), c), dds.Limits{})
	if err != nil {
		return nil, fd, err
	}
	m, err := dds.Decode(t, body, dds.Limits{})
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
	l, err := dds.ValidateFile(mem, dds.ExpectFor(in, int32(os.Getpid()), startTime()), dds.Limits{})
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
			var off uint32
			if err == nil {
				off, err = f.slots.Alloc(dds.SlotSize(&in.Templates[m.Ix]))
			}
			if err == nil {
				err = dds.ZeroSlot(f.area(), off, dds.SlotSize(&in.Templates[m.Ix]))
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
