package responder

import (
	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/asn1tree"
)

// getBulk answers a GetBulk (RFC 3416 4.2.3): N non-repeaters, then up to
// M repetitions of the R repeaters, cut to the varbind cap and the size
// limit.
func getBulk(view asn1tree.View, q *request, s *scratch, maxRepetitions int) (int, int) {
	w := &s.resp
	l := len(q.names)
	n := min(max(int(q.a), 0), l)
	m := max(int(q.b), 0)
	for i, name := range q.names[:n] {
		o, v, ok := view.Search(name, false, nil)
		if !ok {
			w.buf = appendException(w.buf, name, gosnmp.EndOfMibView)
		} else if w.buf, ok = appendVarBind(w.buf, o, &v); !ok {
			return fail(q, w, gosnmp.GenErr, i)
		} else {
			s.names = append(s.names, o)
		}
		if !w.fits(0, 0) {
			return tooBig(w)
		}
	}
	if n == l || m == 0 {
		return 0, 0
	}
	// The cap may cut the response, but never inside the first repetition.
	limit := max(maxRepetitions, l)
	count := n
	s.cur = append(s.cur[:0], q.names[n:]...)
	s.ended = s.ended[:0]
	for range s.cur {
		s.ended = append(s.ended, false)
	}
	for range m {
		allEnded := true
		for j, name := range s.cur {
			if count == limit {
				return 0, 0
			}
			mark, named := w.mark(), len(s.names)
			if s.ended[j] {
				w.buf = appendException(w.buf, name, gosnmp.EndOfMibView)
			} else if o, v, ok := view.Search(name, false, nil); !ok {
				s.ended[j] = true
				w.buf = appendException(w.buf, name, gosnmp.EndOfMibView)
			} else {
				allEnded = false
				s.cur[j] = o
				if w.buf, ok = appendVarBind(w.buf, o, &v); !ok {
					return fail(q, w, gosnmp.GenErr, n+j)
				}
				s.names = append(s.names, o)
			}
			if !w.fits(0, 0) {
				w.undo(mark)
				s.names = s.names[:named]
				if count == 0 {
					return tooBig(w)
				}
				return 0, 0
			}
			count++
		}
		if allEnded {
			break
		}
	}
	return 0, 0
}
