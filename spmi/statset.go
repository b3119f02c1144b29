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

// AfterSource is a Source that can be asked for values taken after a
// time. A statset reads through it so that two reads closer together than
// the minimum age still see two snapshots, and so a rate.
type AfterSource interface {
	Source
	// ReadAfter is Read from a snapshot whose Time is after t, refreshing
	// when needed (a zero t asks for nothing more than Read).
	ReadAfter(ctx context.Context, paths []string, t time.Time) (Sample, error)
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
	r := s.Answer()
	for i, p := range paths {
		out.Items[i] = r.Item(p)
	}
	return out, nil
}

// Item reads the statistic at path p.
func (r *Answer) Item(p string) Item {
	it := Item{Path: cleanPath(p)}
	n, err := r.s.Lookup(p)
	switch {
	case err != nil:
		it.Err = err.(*Error)
	case !n.IsStat():
		it.Err = &Error{Code: SiBadArgument, Msg: "\"" + n.Path + "\" is a context, not a statistic"}
	default:
		r.touch(r.s.partOf(it.Path))
		it.Stat, it.Value = n.Stat, r.Value(n)
		if why := it.Value.Why(); why != "" {
			it.Err = &Error{Code: SiNoValue, Msg: why}
		} else if !it.Value.OK() {
			it.Err = &Error{Code: SiNoValue, Msg: "no value for \"" + n.Path + "\": its source could not be read"}
		}
	}
	return it
}
