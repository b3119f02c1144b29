package spmi

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
