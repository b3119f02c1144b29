package spmi

import (
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
)

// Read returns the values of the statistics at paths from this snapshot.
func (s *Snapshot) Read(paths []string) (spmiwire.Sample, error) {
	out := spmiwire.Sample{Time: s.Time, Items: make([]spmiwire.Item, len(paths))}
	r := s.Answer()
	for i, p := range paths {
		out.Items[i] = r.Item(p)
	}
	return out, nil
}

// Item reads the statistic at path p.
func (r *Answer) Item(p string) spmiwire.Item {
	it := spmiwire.Item{Path: r.s.clean(p)}
	n, pt, err := r.s.lookup(it.Path, p)
	switch {
	case err != nil:
		it.Err = err.(*spmierr.Error)
	case !n.IsStat():
		it.Err = &spmierr.Error{Code: spmierr.SiBadArgument, Msg: "\"" + n.Path + "\" is a context, not a statistic"}
	default:
		r.touch(pt)
		it.Stat, it.Value = n.Stat, r.Value(n)
		if why := it.Value.Why(); why != "" {
			it.Err, it.NotYet = &spmierr.Error{Code: spmierr.SiNoValue, Msg: why}, true
		} else if !it.Value.OK() {
			it.Err = &spmierr.Error{Code: spmierr.SiNoValue, Msg: "no value for \"" + n.Path + "\": its source could not be read"}
		}
	}
	return it
}
