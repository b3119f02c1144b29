package ddsclient

import (
	"errors"
	"fmt"
	"slices"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
)

// Instance is a live volatile context (SpmiDdsAddCx): its handles point
// into the slot the daemon allocated.
type Instance struct {
	s     *Supplier
	t     *Template
	add   ddswire.AddCx
	off   uint32 // slot offset in the data area
	cells []instCell
}

type instCell struct {
	c   *cell
	off uint32 // within the slot
}

// Path is the instance's context path.
func (in *Instance) Path() string { return in.add.Path }

// Offset is the slot's offset in the data area.
func (in *Instance) Offset() uint32 {
	in.s.mu.Lock()
	defer in.s.mu.Unlock()
	return in.off
}

func (in *Instance) cell(t *Template, off uint32) *cell {
	if t != in.t {
		panic("ddsclient: field of another template")
	}
	in.s.mu.Lock()
	defer in.s.mu.Unlock()
	c := newCell()
	if in.s.opt.AutoStamp {
		c.stamp = in.s
	}
	if slices.Contains(in.s.live, in) {
		c.bind(in.s.shm.area, in.off+off)
	}
	in.cells = append(in.cells, instCell{c, off})
	return c
}

// Counter is the handle of counter field f in this instance.
func (in *Instance) Counter(f Field[Counter]) *Counter { return &Counter{in.cell(f.t, f.off)} }

// Gauge is the handle of gauge field f in this instance.
func (in *Instance) Gauge(f Field[Gauge]) *Gauge { return &Gauge{in.cell(f.t, f.off)} }

// Float is the handle of float field f in this instance.
func (in *Instance) Float(f Field[Float]) *Float { return &Float{in.cell(f.t, f.off)} }

func (in *Instance) park() {
	for _, c := range in.cells {
		c.c.park()
	}
}

// AddCx adds context path, an instance of template t (SpmiDdsAddCx).
func (s *Supplier) AddCx(t *Template, path, descr string, asn uint32) (*Instance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t == nil || int(t.ix) >= len(s.v.templates) || s.v.templates[t.ix] != t {
		return nil, spmierr.Errorf(spmierr.SiBadArgument, "AddCx: template not declared for this supplier")
	}
	in := &Instance{s: s, t: t, add: ddswire.AddCx{Ix: t.ix, Path: path, Descr: descr, ASN: asn}}
	off, err := s.request(&in.add)
	if err != nil {
		return nil, err
	}
	if err := s.slotOK(off, t); err != nil {
		return nil, err
	}
	in.off = uint32(off)
	s.live = append(s.live, in)
	return in, nil
}

func (s *Supplier) slotOK(off uint64, t *Template) error {
	if off < uint64(s.init.PermLen) || off%8 != 0 || off+uint64(t.cx.DataSize) > uint64(s.init.AreaLen) {
		return spmierr.Errorf(spmierr.SiShmemFailed, "AddCx: the daemon returned slot offset %d, outside the volatile part", off)
	}
	return nil
}

// DelCx deletes a volatile context (SpmiDdsDelCx). Its handles then write
// to private memory.
func (s *Supplier) DelCx(in *Instance) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.Index(s.live, in)
	if i < 0 {
		return spmierr.Errorf(spmierr.SiBadArgument, "DelCx: not a live instance of this supplier")
	}
	if err := s.ready(); err != nil {
		return err
	}
	if _, err := s.request(&ddswire.DelCx{Offset: in.off}); err != nil {
		return err
	}
	s.live = slices.Delete(s.live, i, i+1)
	in.park()
	return nil
}

// connect re-registers after the connection was lost (s.mu held): a new
// generation, Init, and every live AddCx again, each asking for the slot
// it had, so no handle moves. The daemon publishes a requested slot as it
// is: the values, and Sets racing with the replay, stay where they are and
// no read sees them zeroed. A slot at offset 0 (there is one only when the
// permanent part is empty) is asked for with ddswire.AddCxReplay, since
// offset 0 alone means "any".
func (s *Supplier) connect() error {
	if s.conn != nil {
		return nil
	}
	if err := s.register(); err != nil {
		return err
	}
	for _, in := range s.live {
		add := in.add
		add.Offset = in.off
		if in.off == 0 {
			add.Flags = ddswire.AddCxReplay
		}
		off, err := s.conn.roundTrip(&add, -1)
		if errors.Is(err, ErrDisconnected) {
			s.drop() // consistent: all or nothing, retried later
			return err
		}
		if err != nil || off != uint64(in.off) {
			return s.giveUp(in, err, off)
		}
	}
	return nil
}

// giveUp ends a registration whose replay failed, as the C library does
// (whose callers hold raw pointers): SiShGoAway set, SiAssumedDead now and
// on every later call, so a GoAway loop ends and calls Exit.
func (s *Supplier) giveUp(in *Instance, err error, got uint64) error {
	why := fmt.Sprintf("gave it the slot at %d", got)
	if se := (*spmierr.Error)(nil); errors.As(err, &se) {
		why = "refused it: " + se.Msg
	} else if err != nil {
		why = "refused it: " + err.Error()
	}
	s.drop()
	_ = ddswire.SetGoAway(s.shm.mem)
	return spmierr.Errorf(spmierr.SiAssumedDead, "the daemon restarted; volatile context %s had the slot at %d, "+
		"where its handles write, and the new daemon %s: call Exit", in.add.Path, in.off, why)
}
