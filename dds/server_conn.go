package dds

import (
	"net"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/internal/unixsock"
)

// serveConn runs one supplier's connection to its end; the listener has
// admitted the peer.
func (s *Server) serveConn(c *net.UnixConn, cr unixsock.Peer) {
	r := &ddswire.FDReader{Conn: c, Timeout: s.cfg.IOTimeout}
	defer r.CloseFDs()
	var sup *supplier
	defer func() {
		if sup != nil { // EOF or error: gone at once
			s.kill(sup, !s.isClosed()) // no SiShGoAway on our own shutdown
		}
	}()
	reply := func(t ddswire.MsgType, v uint64, err error) bool {
		c.SetWriteDeadline(time.Now().Add(s.cfg.IOTimeout))
		return ddswire.WriteMessage(c, ddswire.NewReply(t, v, err), s.cfg.Limits) == nil
	}
	for {
		wait := time.Duration(0)
		if sup == nil {
			wait = s.cfg.IOTimeout // Init must come soon after connecting
		}
		r.Next(wait)
		t, body, err := ddswire.ReadFrame(r, s.cfg.Limits)
		if err != nil {
			if spmierr.CodeOf(err) == spmierr.SiBadArgument {
				reply(ddswire.MsgInit, 0, err) // best effort; framing is lost
			}
			return
		}
		m, err := ddswire.Decode(t, body, s.cfg.Limits)
		if err != nil || t.IsReply() {
			if err == nil {
				err = badArg("%v is not a request", t)
			}
			reply(t, 0, err)
			return
		}
		want := 0
		if t == ddswire.MsgInit && sup == nil {
			want = 1
		}
		if n := len(r.FDs); n != want || r.Truncated {
			r.CloseFDs()
			reply(t, 0, shmErr("%v: %d descriptors passed with the frame, want %d", t, n, want))
			return
		}
		switch m := m.(type) {
		case *ddswire.Init:
			if sup != nil {
				reply(t, 0, badArg("Init: already registered"))
				continue
			}
			fd := r.FDs[0]
			r.FDs = nil
			sup, err = s.register(m, fd, c, cr)
			unix.Close(fd)
			if err != nil {
				s.noteRefusal(cr, err)
				reply(t, 0, err)
				return
			}
			if !reply(t, sup.id, nil) {
				return
			}
		case *ddswire.AddCx, *ddswire.DelCx, *ddswire.Exit:
			if sup == nil {
				reply(t, 0, spmierr.Errorf(spmierr.SiNotInit, "%v before Init", t))
				return
			}
			var v uint64
			switch m := m.(type) {
			case *ddswire.AddCx:
				var off uint32
				off, err = s.reg.addCx(sup, m)
				v = uint64(off)
			case *ddswire.DelCx:
				err = s.reg.delCx(sup, m.Offset)
			case *ddswire.Exit:
				s.reg.remove(sup)
				sup.unmap()
				sup = nil
				reply(t, 0, nil)
				return
			}
			if sup.faulted.Load() {
				s.reg.notifyFault()
			}
			if err != nil {
				s.noteRefusal(cr, err)
			}
			if !reply(t, v, err) {
				return
			}
		}
	}
}

// noteRefusal logs a registration refused at a limit or for a name (at
// most once a minute per user and reason, as socket refusals are): the
// supplier is told, and so is the operator.
func (s *Server) noteRefusal(p unixsock.Peer, err error) {
	if c := spmierr.CodeOf(err); c == spmierr.SiCallocFailed || c == spmierr.SiDuplicate {
		s.refused.Note(p, "dds: registration refused", err.Error())
	}
}

// register maps the file and adds the supplier; on error nothing remains.
func (s *Server) register(m *ddswire.Init, fd int, c *net.UnixConn, cr unixsock.Peer) (*supplier, error) {
	v, err := ddswire.CheckInit(m, s.cfg.Limits)
	if err != nil {
		return nil, err
	}
	mem, l, err := mapShared(fd, m, cr, s.cfg.Limits)
	if err != nil {
		return nil, err
	}
	sup := &supplier{conn: c, peer: cr, init: m, vendor: v,
		slots: NewSlots(l.PermLen, l.AreaLen), mem: mem, layout: l, stampAt: s.reg.now(), window: s.timeout}
	sup.stamp, _ = ddswire.LoadStamp(mem)
	if _, err := s.reg.add(sup); err != nil {
		sup.gone = true
		sup.unmap()
		return nil, err
	}
	return sup, nil
}

func (r *registry) notifyFault() {
	select {
	case r.faults <- struct{}{}:
	default:
	}
}
