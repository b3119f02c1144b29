package dds

import (
	"time"

	"github.com/perfagent/subagent/spmi"
)

// collected is what one Collect read: the values of each view context
// (by view index; nil for contexts without statistics) and the suppliers
// whose file faulted.
type collected struct {
	cx     [][]spmi.Value
	faults map[*supplier]error
}

// values reads every supplier's values, one consistent read per supplier
// covering all its contexts, so a batch written across contexts is served
// whole.
func (p *Provider) values(view []cxView, now time.Time) collected {
	out := collected{cx: make([][]spmi.Value, len(view)), faults: map[*supplier]error{}}
	bySup := map[*supplier][]int{}
	var order []*supplier
	for i := range view {
		v := &view[i]
		if v.sup == nil || len(v.stats) == 0 {
			continue
		}
		if _, ok := bySup[v.sup]; !ok {
			order = append(order, v.sup)
		}
		bySup[v.sup] = append(bySup[v.sup], i)
	}
	for _, sup := range order {
		if err := sup.readValues(view, bySup[sup], out.cx, p.reg, now); err != nil {
			out.faults[sup] = err
		}
	}
	return out
}

// readValues fills out[i] for the view contexts idx of s. A file of minor
// 1 or later is read with ReadConsistent; when that finds no moment
// without an open batch, each context gets the values of the last
// consistent read (none for a context that has not had one), counted in
// reg.stale. A writer descheduled inside a batch causes that now and then;
// reads failing for reg.staleWarn on end mean a batch left open, which is
// logged once per supplier. A memory fault gives no values, marks s for
// removal and is returned.
func (s *supplier) readValues(view []cxView, idx []int, out [][]spmi.Value, reg *registry, now time.Time) error {
	s.valMu.Lock()
	defer s.valMu.Unlock()
	for _, i := range idx {
		out[i] = make([]spmi.Value, len(view[i].stats)) // NoValue
	}
	if s.faulted.Load() {
		return nil
	}
	copyValues := func(area []byte) error {
		for _, i := range idx {
			v := &view[i]
			for j := range v.stats {
				x, err := ReadValue(area, FieldOf(&v.stats[j], v.base))
				if err != nil {
					if spmi.CodeOf(err) == spmi.SiShmemFailed {
						return err
					}
					x = spmi.NoValue // cannot happen for a checked field
				}
				out[i][j] = x
			}
		}
		return nil
	}
	ok := true
	var err error
	mapped := s.area(func(area []byte) {
		if !s.layout.Batches {
			err = copyValues(area) // a minor-0 file: read as it is
			return
		}
		ok, err = ReadConsistent(s.mem, func() error { return copyValues(area) })
	})
	switch {
	case !mapped:
		return nil
	case err != nil:
		s.faulted.Store(true)
		for _, i := range idx {
			clear(out[i])
		}
		return err
	case ok:
		s.staleSince = time.Time{}
		last := make(map[uint64][]spmi.Value, len(idx))
		for _, i := range idx {
			last[view[i].id] = out[i]
		}
		s.last = last
		return nil
	}
	reg.stale.Add(1)
	for _, i := range idx {
		prev := s.last[view[i].id]
		if len(prev) != len(out[i]) {
			prev = nil
		}
		clear(out[i])
		copy(out[i], prev)
	}
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
	return nil
}
