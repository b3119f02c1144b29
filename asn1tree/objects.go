package asn1tree

// Definer is a View that knows which objects it serves apart from their
// values: a column none of whose cells has a value now, a statistic
// whose source could not be read, still exist.
type Definer interface {
	// Defines reports whether name is under an object the view serves
	// (its OID is a prefix of name, or name itself), whether or not that
	// instance exists or has a value now.
	Defines(name OID) bool
}

// Defines tells the exception of a Get that finds no value at name
// (RFC 3416 4.2.1): true for noSuchInstance (an object the view serves
// has no such instance), false for noSuchObject. A Definer decides. Of
// another view the entries tell: one at name (without a servable value),
// one at name minus its last arc (name is under an instance), or one
// beside name (the first under that parent is as long as name: a
// scalar's wrong index, a column's missing row).
func Defines(v View, name OID) bool {
	if d, ok := v.(Definer); ok {
		return d.Defines(name)
	}
	if _, ok := v.Get(name); ok {
		return true
	}
	if len(name) < 2 {
		return false
	}
	parent := name[:len(name)-1]
	o, _, ok := v.Search(parent, true, nil)
	return ok && o.HasPrefix(parent) && (len(o) == len(parent) || len(o) == len(name))
}
