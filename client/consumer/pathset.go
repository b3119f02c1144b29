package consumer

import (
	"context"
	"slices"
	"time"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
)

// Source reads statistics by path as one consistent sample. The daemon's
// control connection (Client) and its own hierarchy are both Sources, so
// path sets work the same against either.
type Source interface {
	Read(ctx context.Context, paths []string) (spmiwire.Sample, error)
}

// AfterSource is a Source that can be asked for values taken after a
// time. A path set reads through it so that two reads closer together
// than the daemon's minimum age still see two snapshots, and so a rate.
type AfterSource interface {
	Source
	// ReadAfter is Read from a snapshot whose Time is after t, refreshing
	// when needed (a zero t asks for nothing more than Read).
	ReadAfter(ctx context.Context, paths []string, t time.Time) (spmiwire.Sample, error)
}

// PathSet is a set of statistics by path read together from a Source, as the guide's SpmiStatSet:
// each read reports the time, the elapsed time since the previous read and,
// for counters, the change and the rate per second. A PathSet is used by
// one goroutine at a time.
type PathSet struct {
	src   Source
	paths []string
	refs  []int // times each path was added (the guide's ref_count) less 1
	prev  *spmiwire.Sample
}

// NewPathSet creates a statset; every path must name a statistic.
func NewPathSet(ctx context.Context, src Source, paths ...string) (*PathSet, error) {
	if len(paths) == 0 {
		return nil, spmierr.Errorf(spmierr.SiBadArgument, "a statset needs at least one statistic")
	}
	if err := check(ctx, src, paths); err != nil {
		return nil, err
	}
	// Each path given is a value of its own (`get A A` prints two);
	// Add counts a path added again.
	return &PathSet{src: src, paths: slices.Clone(paths), refs: make([]int, len(paths))}, nil
}

// check refuses paths that name no statistic; a statistic whose source
// fails now may have a value later, so SiNoValue is accepted.
func check(ctx context.Context, src Source, paths []string) error {
	s, err := src.Read(ctx, paths)
	if err != nil {
		return err
	}
	for _, it := range s.Items {
		if it.Err != nil && it.Err.Code != spmierr.SiNoValue {
			return it.Err
		}
	}
	return nil
}

// Paths are the statistics of the set.
func (ss *PathSet) Paths() []string { return ss.paths }

// Add adds the statistic at path (SpmiPathAddSetStat). It refuses a path
// that names no statistic (SiNotFound, SiBadArgument); one already in the
// set is counted, as the guide's ref_count, and stays until removed as
// often. Its rate starts at the second read after Add.
func (ss *PathSet) Add(ctx context.Context, path string) error {
	if i := ss.index(path); i >= 0 {
		ss.refs[i]++
		return nil
	}
	if err := check(ctx, ss.src, []string{path}); err != nil {
		return err
	}
	// The previous sample has no item for it, so no rate at the next read.
	ss.paths, ss.refs = append(ss.paths, path), append(ss.refs, 0)
	return nil
}

// RefCount is the number of times path is in the set (the guide's
// ref_count): 0 when it is not.
func (ss *PathSet) RefCount(path string) int {
	if i := ss.index(path); i >= 0 {
		return ss.refs[i] + 1
	}
	return 0
}

// Del removes the statistic at path from the set (SpmiDelSetStat) once it
// has been removed as often as it was added; SiNotFound when it is not in
// the set.
func (ss *PathSet) Del(path string) error {
	i := ss.index(path)
	if i < 0 {
		return spmierr.Errorf(spmierr.SiNotFound, "%q is not in the statset", spmiwire.CleanPath(path))
	}
	if ss.refs[i] > 0 {
		ss.refs[i]--
		return nil
	}
	ss.paths, ss.refs = slices.Delete(ss.paths, i, i+1), slices.Delete(ss.refs, i, i+1)
	if ss.prev != nil && i < len(ss.prev.Items) {
		ss.prev.Items = slices.Delete(ss.prev.Items, i, i+1)
	}
	return nil
}

func (ss *PathSet) index(path string) int {
	p := spmiwire.CleanPath(path)
	return slices.IndexFunc(ss.paths, func(q string) bool { return spmiwire.CleanPath(q) == p })
}

// Reading is one read of a statset.
type Reading struct {
	Time    time.Time
	Elapsed time.Duration // since the previous read; zero on the first
	Values  []StatValue
}

// StatValue is one statistic in a Reading. Change and Rate are set for
// counters from the second read on (HasRate).
type StatValue struct {
	spmiwire.Item
	Change  float64
	Rate    float64
	HasRate bool
}

// Read reads all statistics of the set at once. From an AfterSource the
// values are newer than those of the previous read.
func (ss *PathSet) Read(ctx context.Context) (Reading, error) {
	if len(ss.paths) == 0 {
		return Reading{}, spmierr.Errorf(spmierr.SiBadArgument, "the statset is empty")
	}
	var s spmiwire.Sample
	var err error
	if as, ok := ss.src.(AfterSource); ok && ss.prev != nil {
		s, err = as.ReadAfter(ctx, ss.paths, ss.prev.Time)
	} else {
		s, err = ss.src.Read(ctx, ss.paths)
	}
	if err != nil {
		return Reading{}, err
	}
	r := reading(ss.prev, s)
	ss.prev = &s
	return r, nil
}

// reading is the Reading of cur, with counters' change and rate since
// prev (nil: the first read, no rates); the items of both are in the
// same order.
func reading(prev *spmiwire.Sample, cur spmiwire.Sample) Reading {
	r := Reading{Time: cur.Time, Values: make([]StatValue, len(cur.Items))}
	if prev != nil {
		r.Elapsed = cur.Time.Sub(prev.Time)
	}
	for i, it := range cur.Items {
		sv := StatValue{Item: it}
		if prev != nil && it.Stat != nil && it.Stat.Val == ddswire.SiCounter && it.Value.OK() && i < len(prev.Items) {
			if p := prev.Items[i].Value; p.OK() {
				sv.Change = spmiwire.CounterChange(p, it.Value)
				if r.Elapsed > 0 {
					sv.Rate = sv.Change / r.Elapsed.Seconds()
					sv.HasRate = true
				}
			}
		}
		r.Values[i] = sv
	}
	return r
}
