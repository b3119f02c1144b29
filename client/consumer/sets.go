package consumer

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/perfagent/subagent/client/spmierr"

	"github.com/perfagent/subagent/client/spmiwire"
)

// StatSet is a set of statistics read together (the guide's SpmiStatSet).
// It lives in the daemon's session too, so that a read of 20,000
// statistics is one small request answered from one snapshot; the paths,
// their descriptions and reference counts are kept here, and the set is
// made again on the next connection after a daemon restart. Use one from
// one goroutine at a time.
type StatSet struct {
	c     *Consumer
	paths []string
	refs  []int // times each path was added (the guide's ref_count) less 1
	descs []*spmiwire.StatDesc
	prev  *spmiwire.Sample

	// The daemon's set: its id on connection on, which holds the first
	// synced paths; on nil: none yet (or one to make again, after a Del).
	on     *Client
	id     int
	synced int
}

// NewStatSet creates a statset of the statistics at paths
// (SpmiCreateStatSet and SpmiPathAddSetStat); a path that names no
// statistic is refused with its SPMI error. A path given twice is two
// values, as the guide's SpmiPathAddSetStat called twice on a new set.
func (c *Consumer) NewStatSet(ctx context.Context, paths ...string) (*StatSet, error) {
	if len(paths) == 0 {
		return nil, spmierr.Errorf(spmierr.SiBadArgument, "a statset needs at least one statistic")
	}
	descs, err := c.describe(ctx, paths)
	if err != nil {
		return nil, err
	}
	return &StatSet{c: c, paths: slices.Clone(paths), refs: make([]int, len(paths)), descs: descs}, nil
}

// describe reads the descriptions of the statistics at paths, as many a
// request as one may carry; one that names no statistic is its error (no
// value now is fine: it may have one later).
func (c *Consumer) describe(ctx context.Context, paths []string) ([]*spmiwire.StatDesc, error) {
	out := make([]*spmiwire.StatDesc, 0, len(paths))
	for rest := paths; len(rest) > 0; {
		n := batch(rest)
		smp, err := c.Read(ctx, rest[:n])
		if err != nil {
			return nil, err
		}
		for _, it := range smp.Items {
			if it.Err != nil && it.Err.Code != spmierr.SiNoValue {
				return nil, it.Err
			}
			out = append(out, it.Stat)
		}
		rest = rest[n:]
	}
	return out, nil
}

// batch is how many of paths (at least one) one request carries: at most
// spmiwire.MaxPaths, and their JSON within spmiwire.MaxRequest.
func batch(paths []string) int {
	size := 1 << 10 // the rest of the request
	for i, p := range paths {
		b, _ := json.Marshal(p)
		size += len(b) + 1
		if i == spmiwire.MaxPaths || (i > 0 && size >= spmiwire.MaxRequest) {
			return i
		}
	}
	return len(paths)
}

// Add adds the statistic at path (SpmiPathAddSetStat): SiNotFound when
// there is no such statistic; one in the set already is counted
// (RefCount) and stays until deleted as often. Its rate starts at the
// second read after Add.
func (s *StatSet) Add(ctx context.Context, path string) error {
	if i := s.index(path); i >= 0 {
		s.refs[i]++
		return nil
	}
	d, err := s.c.describe(ctx, []string{path})
	if err != nil {
		return err
	}
	s.paths, s.refs, s.descs = append(s.paths, path), append(s.refs, 0), append(s.descs, d[0])
	return nil
}

// RefCount is the number of times path is in the set (the guide's
// ref_count): 0 when it is not.
func (s *StatSet) RefCount(path string) int {
	if i := s.index(path); i >= 0 {
		return s.refs[i] + 1
	}
	return 0
}

// Del removes the statistic at path (SpmiDelSetStat) once deleted as
// often as it was added; SiNotFound when it is not in the set.
func (s *StatSet) Del(path string) error {
	i := s.index(path)
	if i < 0 {
		return spmierr.Errorf(spmierr.SiNotFound, "%q is not in the statset", spmiwire.CleanPath(path))
	}
	if s.refs[i] > 0 {
		s.refs[i]--
		return nil
	}
	s.paths, s.refs, s.descs = slices.Delete(s.paths, i, i+1), slices.Delete(s.refs, i, i+1), slices.Delete(s.descs, i, i+1)
	if s.prev != nil && i < len(s.prev.Items) {
		s.prev.Items = slices.Delete(s.prev.Items, i, i+1)
	}
	// The daemon's set has no deletion: the next read makes it anew.
	s.synced = -1
	return nil
}

func (s *StatSet) index(path string) int {
	p := spmiwire.CleanPath(path)
	return slices.IndexFunc(s.paths, func(q string) bool { return spmiwire.CleanPath(q) == p })
}

// Paths lists the set's statistics in the order their values come.
func (s *StatSet) Paths() []string { return s.paths }

// Read reads every statistic of the set at once (SpmiGetStatSet, then
// SpmiFirstVals/SpmiNextVals over Reading.Values): one small request to
// the daemon, values from one snapshot newer than the previous read's.
func (s *StatSet) Read(ctx context.Context) (Reading, error) {
	if len(s.paths) == 0 {
		return Reading{}, spmierr.Errorf(spmierr.SiBadArgument, "the statset is empty")
	}
	var after time.Time
	if s.prev != nil {
		after = s.prev.Time
	}
	smp, err := do(s.c, func(cl *Client) (spmiwire.Sample, error) {
		if err := s.sync(ctx, cl); err != nil {
			return spmiwire.Sample{}, err
		}
		return cl.StatSetGet(ctx, s.id, after)
	})
	if err != nil {
		return Reading{}, err
	}
	if len(smp.Items) != len(s.paths) {
		return Reading{}, fmt.Errorf("the daemon answered %d values for a statset of %d", len(smp.Items), len(s.paths))
	}
	for i := range smp.Items {
		smp.Items[i].Path, smp.Items[i].Stat = s.paths[i], s.descs[i]
	}
	r := reading(s.prev, smp)
	s.prev = &smp
	return r, nil
}

// sync makes the daemon's set on cl hold the set's paths: made anew on a
// new connection (a daemon restart) or after a Del, extended after Add.
// The paths were checked when added, so the daemon keeps them even if
// one names nothing now (its value carries the error).
func (s *StatSet) sync(ctx context.Context, cl *Client) error {
	if s.on != cl || s.synced < 0 {
		if s.on == cl {
			cl.StatSetFree(ctx, s.id) // a set it made anew below replaces
		}
		id, err := cl.StatSetCreate(ctx)
		if err != nil {
			return err
		}
		s.on, s.id, s.synced = cl, id, 0
	}
	for s.synced < len(s.paths) {
		rest := s.paths[s.synced:]
		n := batch(rest)
		if _, err := cl.StatSetAdd(ctx, s.id, rest[:n], true); err != nil {
			return err
		}
		s.synced += n
	}
	return nil
}

// Free deletes the statset (SpmiFreeStatSet) and the daemon's copy.
func (s *StatSet) Free(ctx context.Context) error {
	s.paths, s.refs, s.descs, s.prev = nil, nil, nil, nil
	on := s.on
	s.on = nil
	if on == nil {
		return nil
	}
	cl, _, err := s.c.client()
	if err != nil || cl != on {
		return nil // gone with the connection it was made on
	}
	return cl.StatSetFree(ctx, s.id)
}

// HotSet is a hotset created at run time (the guide's SpmiHotSet): it
// lives in the daemon for this connection, and is made again on the next
// connection after a daemon restart.
type HotSet struct {
	c    *Consumer
	id   int
	gen  int // connection it was made on
	defs []spmiwire.HotDef
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
func (h *HotSet) Add(ctx context.Context, d spmiwire.HotDef) (int, error) {
	if err := h.ensure(ctx); err != nil {
		return 0, err
	}
	i, err := do(h.c, func(cl *Client) (int, error) { return cl.HotsetAdd(ctx, h.id, d) })
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
	if _, err := do(h.c, func(cl *Client) (struct{}, error) { return struct{}{}, cl.HotsetDel(ctx, h.id, index) }); err != nil {
		return err
	}
	h.defs = append(h.defs[:index:index], h.defs[index+1:]...)
	return nil
}

// Read reads every peer set at once (SpmiGetHotSet, then SpmiFirstHot,
// SpmiNextHot and SpmiNextHotItem over the result): counters are compared
// as rates per second since the previous read, so the first read after
// creation (or a daemon restart) has no counter values yet.
func (h *HotSet) Read(ctx context.Context) (*spmiwire.HotResult, error) {
	if err := h.ensure(ctx); err != nil {
		return nil, err
	}
	r, err := do(h.c, func(cl *Client) (*spmiwire.HotResult, error) { return cl.HotsetGet(ctx, h.id, h.last) })
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
