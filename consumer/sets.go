package consumer

import (
	"context"
	"time"

	"github.com/perfagent/subagent/control"
	"github.com/perfagent/subagent/spmi"
)

// StatSet is a set of statistics read together (the guide's SpmiStatSet).
// Use one from one goroutine at a time.
type StatSet struct {
	c  *Consumer
	ss *spmi.StatSet
}

// source reads through the consumer's connection, dialling again after a
// daemon restart.
type source struct{ c *Consumer }

func (s source) Read(ctx context.Context, paths []string) (spmi.Sample, error) {
	return do(s.c, func(cl *control.Client) (spmi.Sample, error) { return cl.Read(ctx, paths) })
}

func (s source) ReadAfter(ctx context.Context, paths []string, t time.Time) (spmi.Sample, error) {
	return do(s.c, func(cl *control.Client) (spmi.Sample, error) { return cl.ReadAfter(ctx, paths, t) })
}

// NewStatSet creates a statset of the statistics at paths
// (SpmiCreateStatSet and SpmiPathAddSetStat); a path that names no
// statistic is refused with its SPMI error.
func (c *Consumer) NewStatSet(ctx context.Context, paths ...string) (*StatSet, error) {
	ss, err := spmi.NewStatSet(ctx, source{c}, paths...)
	if err != nil {
		return nil, err
	}
	return &StatSet{c: c, ss: ss}, nil
}

// Add adds the statistic at path (SpmiPathAddSetStat): SiNotFound when
// there is no such statistic; one in the set already is counted (RefCount).
func (s *StatSet) Add(ctx context.Context, path string) error { return s.ss.Add(ctx, path) }

// RefCount is the number of times path is in the set (the guide's ref_count).
func (s *StatSet) RefCount(path string) int { return s.ss.RefCount(path) }

// Del removes the statistic at path (SpmiDelSetStat) once removed as often
// as it was added.
func (s *StatSet) Del(path string) error { return s.ss.Del(path) }

// Paths lists the set's statistics in the order their values come.
func (s *StatSet) Paths() []string { return s.ss.Paths() }

// Read reads every statistic of the set at once (SpmiGetStatSet, then
// SpmiFirstVals/SpmiNextVals over Reading.Values): one request to the
// daemon, values from one snapshot newer than the previous read's.
func (s *StatSet) Read(ctx context.Context) (spmi.Reading, error) { return s.ss.Read(ctx) }

// HotSet is a hotset created at run time (the guide's SpmiHotSet): it
// lives in the daemon for this connection, and is made again on the next
// connection after a daemon restart.
type HotSet struct {
	c    *Consumer
	id   int
	gen  int // connection it was made on
	defs []control.HotDef
	last time.Time
}

// NewHotSet creates an empty hotset (SpmiCreateHotSet).
func (c *Consumer) NewHotSet(ctx context.Context) (*HotSet, error) {
	h := &HotSet{c: c}
	if err := h.ensure(ctx); err != nil {
		return nil, err
	}
	return h, nil
}

// ensure makes the hotset on the current connection, with its peer sets,
// when it was made on an earlier one (or never).
func (h *HotSet) ensure(ctx context.Context) error {
	cl, gen, err := h.c.client()
	if err != nil {
		return err
	}
	if h.gen == gen {
		return nil
	}
	id, err := cl.HotsetCreate(ctx)
	if err != nil {
		h.c.failed(cl, err)
		return err
	}
	for _, d := range h.defs {
		if _, err := cl.HotsetAdd(ctx, id, d); err != nil {
			h.c.failed(cl, err)
			return err
		}
	}
	h.id, h.gen, h.last = id, gen, time.Time{}
	return nil
}

// Add adds a peer set (SpmiAddSetHot) and returns its index in the
// readings. The daemon checks it as it checks configured hotsets, and
// refuses a statistic that matches nothing (SiNotFound, with the nearest
// name that exists).
func (h *HotSet) Add(ctx context.Context, d control.HotDef) (int, error) {
	if err := h.ensure(ctx); err != nil {
		return 0, err
	}
	i, err := do(h.c, func(cl *control.Client) (int, error) { return cl.HotsetAdd(ctx, h.id, d) })
	if err != nil {
		return 0, err
	}
	h.defs = append(h.defs, d)
	return i, nil
}

// Del removes the peer set at index (SpmiDelSetHot).
func (h *HotSet) Del(ctx context.Context, index int) error {
	if err := h.ensure(ctx); err != nil {
		return err
	}
	if _, err := do(h.c, func(cl *control.Client) (struct{}, error) { return struct{}{}, cl.HotsetDel(ctx, h.id, index) }); err != nil {
		return err
	}
	h.defs = append(h.defs[:index:index], h.defs[index+1:]...)
	return nil
}

// Read reads every peer set at once (SpmiGetHotSet, then SpmiFirstHot,
// SpmiNextHot and SpmiNextHotItem over the result): counters are compared
// as rates per second since the previous read, so the first read after
// creation (or a daemon restart) has no counter values yet.
func (h *HotSet) Read(ctx context.Context) (*control.HotResult, error) {
	if err := h.ensure(ctx); err != nil {
		return nil, err
	}
	r, err := do(h.c, func(cl *control.Client) (*control.HotResult, error) { return cl.HotsetGet(ctx, h.id, h.last) })
	if err != nil {
		return nil, err
	}
	h.last = r.Time
	return r, nil
}

// Free deletes the hotset (SpmiFreeHotSet).
func (h *HotSet) Free(ctx context.Context) error {
	cl, gen, err := h.c.client()
	if err != nil || gen != h.gen {
		return err // gone with the connection it was made on
	}
	return cl.HotsetFree(ctx, h.id)
}
