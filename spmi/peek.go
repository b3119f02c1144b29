package spmi

import (
	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
)

// Peek lists the node at path and everything below it (all of the
// hierarchy for an empty path) in ASN order.
func Peek(s *Snapshot, path string) ([]spmiwire.Entry, error) {
	out, _, err := PeekPage(s, path, 0, "", 0)
	return out, err
}

// PeekPage lists the node at path and what lies below it, depth levels
// down (0: all), in ASN order: the entries after the relative id from
// (the last one of the previous page, dotted; "": from the node itself),
// at most limit of them (0: all). more says that entries remain, so that
// a listing of any size costs one page at a time.
func PeekPage(s *Snapshot, path string, depth int, fromRel string, limit int) (out []spmiwire.Entry, more bool, err error) {
	var from asn1tree.OID
	if fromRel != "" {
		if from, err = asn1tree.Parse(fromRel); err != nil {
			return nil, false, spmierr.Errorf(spmierr.SiBadArgument, "peek from %.64q: %v", fromRel, err)
		}
	}
	start := s.Top
	if path != "" && path != "/" {
		if start, err = s.Lookup(path); err != nil {
			return nil, false, err
		}
	}
	var visit func(n *Node, level int) bool
	visit = func(n *Node, level int) bool {
		if n != s.Top {
			switch {
			case from == nil || asn1tree.Compare(n.Rel, from) > 0:
				if limit > 0 && len(out) == limit {
					more = true
					return false
				}
				out = append(out, entryOf(s, n))
			case !from.HasPrefix(n.Rel):
				return true // n and all below it come before from
			}
		}
		if depth > 0 && level == depth {
			return true
		}
		return n.EachChild(func(c *Node) bool { return visit(c, level+1) })
	}
	visit(start, 0)
	return out, more, nil
}

func entryOf(s *Snapshot, n *Node) spmiwire.Entry {
	e := spmiwire.Entry{Path: n.Path, Descr: n.Descr, Rel: n.Rel.String(), OID: n.FullOID(s.Base).String(), Stat: n.Stat, Instance: n.Instance, Named: n.Named(), Rows: n.HasRows(), RowName: n.RowName(), Aggregate: n.Aggregate()}
	if c := n.Cell(); c != nil {
		e.Cell = c.String()
	}
	if !n.IsStat() {
		e.Inst = spmiwire.InstText(n.Inst())
		if n.Cx != nil {
			e.NameIsNumber, e.DescrStat = n.Cx.NameIsNumber, n.Cx.DescrStat
		}
	}
	return e
}
