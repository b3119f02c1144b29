package spmi

import (
	"context"
	"time"
)

// Source reads statistics by path as one consistent sample. The local
// Hierarchy and the daemon's control client are both Sources, so statsets
// work the same against either.
type Source interface {
	Read(ctx context.Context, paths []string) (Sample, error)
}

// Sample is the values of several statistics read at one time.
type Sample struct {
	Time  time.Time
	Items []Item
}

// Item is one statistic of a Sample. Err is set (SiNotFound, SiNoValue,
// SiBadArgument) when the path gave no value.
type Item struct {
	Path  string    `json:"path"`
	Stat  *StatDesc `json:"stat,omitempty"`
	Value Value     `json:"value"`
	Err   *Error    `json:"err,omitempty"`
}

// Read returns the values of the statistics at paths from this snapshot.
func (s *Snapshot) Read(paths []string) (Sample, error) {
	out := Sample{Time: s.Time, Items: make([]Item, len(paths))}
	for i, p := range paths {
		out.Items[i] = s.item(p)
	}
	return out, nil
}

func (s *Snapshot) item(p string) Item {
	it := Item{Path: cleanPath(p)}
	n, err := s.Lookup(p)
	switch {
	case err != nil:
		it.Err = err.(*Error)
	case !n.IsStat():
		it.Err = &Error{Code: SiBadArgument, Msg: "\"" + n.Path + "\" is a context, not a statistic"}
	default:
		it.Stat, it.Value = n.Stat, n.Value
		if !n.Value.OK() {
			it.Err = &Error{Code: SiNoValue, Msg: "no value for \"" + n.Path + "\": its source could not be read"}
		}
	}
	return it
}

// StatSet is a set of statistics read together, as the guide's SpmiStatSet:
// each read reports the time, the elapsed time since the previous read and,
// for counters, the change and the rate per second.
type StatSet struct {
	src   Source
	paths []string
	prev  *Sample
}

// NewStatSet creates a statset; every path must name a statistic.
func NewStatSet(ctx context.Context, src Source, paths ...string) (*StatSet, error) {
	if len(paths) == 0 {
		return nil, Errorf(SiBadArgument, "a statset needs at least one statistic")
	}
	s, err := src.Read(ctx, paths)
	if err != nil {
		return nil, err
	}
	for _, it := range s.Items {
		if it.Err != nil && it.Err.Code != SiNoValue {
			return nil, it.Err
		}
	}
	return &StatSet{src: src, paths: append([]string(nil), paths...)}, nil
}

// Paths are the statistics of the set.
func (ss *StatSet) Paths() []string { return ss.paths }

// Reading is one read of a statset.
type Reading struct {
	Time    time.Time
	Elapsed time.Duration // since the previous read; zero on the first
	Values  []StatValue
}

// StatValue is one statistic in a Reading. Change and Rate are set for
// counters from the second read on (HasRate).
type StatValue struct {
	Item
	Change  float64
	Rate    float64
	HasRate bool
}

// Read reads all statistics of the set at once.
func (ss *StatSet) Read(ctx context.Context) (Reading, error) {
	s, err := ss.src.Read(ctx, ss.paths)
	if err != nil {
		return Reading{}, err
	}
	r := Reading{Time: s.Time, Values: make([]StatValue, len(s.Items))}
	if ss.prev != nil {
		r.Elapsed = s.Time.Sub(ss.prev.Time)
	}
	for i, it := range s.Items {
		sv := StatValue{Item: it}
		if ss.prev != nil && it.Stat != nil && it.Stat.Val == SiCounter && it.Value.OK() && i < len(ss.prev.Items) {
			if p := ss.prev.Items[i].Value; p.OK() {
				sv.Change = counterChange(p, it.Value)
				if r.Elapsed > 0 {
					sv.Rate = sv.Change / r.Elapsed.Seconds()
					sv.HasRate = true
				}
			}
		}
		r.Values[i] = sv
	}
	ss.prev = &s
	return r, nil
}
