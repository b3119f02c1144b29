package asn1tree

// Join is a View serving a and b together, whose OIDs must not overlap
// (b holds its own subtree, such as the writable tables beside the
// statistics). Get asks both; Search answers the lesser of both finds.
func Join(a, b View) View {
	if b == nil {
		return a
	}
	if a == nil {
		return b
	}
	return joined{a, b}
}

type joined struct{ a, b View }

func (j joined) Get(o OID) (Value, bool) {
	if v, ok := j.a.Get(o); ok {
		return v, true
	}
	return j.b.Get(o)
}

func (j joined) Search(start OID, include bool, end OID) (OID, Value, bool) {
	oa, va, oka := j.a.Search(start, include, end)
	ob, vb, okb := j.b.Search(start, include, end)
	switch {
	case !okb:
		return oa, va, oka
	case !oka || Compare(ob, oa) < 0:
		return ob, vb, true
	}
	return oa, va, true
}

// Defines asks both views.
func (j joined) Defines(name OID) bool { return Defines(j.a, name) || Defines(j.b, name) }
