package responder

import (
	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/snmpreq"
)

// nextAnswer is the response to a GetNext or GetBulk as snmpreq builds
// it: each search from where its varbind stands, encoded at once.
type nextAnswer struct {
	view asn1tree.View
	w    *response
	cur  []asn1tree.OID // where each request varbind stands
	v1   bool
}

func (a *nextAnswer) Next(i int) (asn1tree.OID, bool, bool) {
	name := a.cur[i]
	o, v, found := next(a.view, name, a.v1)
	if !found {
		a.w.buf = appendException(a.w.buf, name, gosnmp.EndOfMibView)
		return nil, false, true
	}
	var ok bool
	if a.w.buf, ok = appendVarBind(a.w.buf, o, &v); !ok {
		return nil, true, false
	}
	a.cur[i] = o
	return o, true, true
}

func (a *nextAnswer) End(i int) {
	a.w.buf = appendException(a.w.buf, a.cur[i], gosnmp.EndOfMibView)
}

func (a *nextAnswer) Mark() int     { return a.w.mark() }
func (a *nextAnswer) Undo(mark int) { a.w.undo(mark) }
func (a *nextAnswer) Fits() bool    { return a.w.fits(0, 0) }

func (a *nextAnswer) forget() {
	a.view = nil
	clear(a.cur)
}

// serve answers a GetNext or GetBulk by snmpreq's rules; maxRepetitions
// caps a GetBulk's varbinds.
func (s *scratch) serve(view asn1tree.View, q *request, maxRepetitions int) (int, int) {
	a := &s.next
	a.view, a.w, a.v1 = view, &s.resp, q.version == int(gosnmp.Version1)
	a.cur = append(a.cur[:0], q.names...)
	res := s.rules.Serve(a, &snmpreq.Request{Op: q.op(), N: len(q.names), NonRepeaters: int(q.a),
		MaxRepetitions: int(q.b), V1: a.v1, MaxVarBinds: maxRepetitions})
	switch res.Err {
	case snmpreq.TooBig:
		return tooBig(a.w)
	case snmpreq.GenErr:
		return fail(q, a.w, gosnmp.GenErr, res.Index)
	case snmpreq.NoSuchName:
		return fail(q, a.w, gosnmp.NoSuchName, res.Index)
	}
	return 0, 0
}
