package responder

import (
	"crypto/subtle"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/asn1tree"
)

// scratch is the memory one request needs, reused from request to request
// by the goroutine that owns it.
type scratch struct {
	req   request
	resp  response
	cur   []asn1tree.OID // GetBulk: where each repeater stands
	ended []bool         // GetBulk: the repeater reached endOfMibView
	sv    sysView        // the system group before the tree's view
	why   error          // why the last packet got no answer, for the log
}

// emptyView serves when the view function returns nil.
type emptyView struct{}

func (emptyView) Get(asn1tree.OID) (asn1tree.Value, bool) { return asn1tree.Value{}, false }
func (emptyView) Search(asn1tree.OID, bool, asn1tree.OID) (asn1tree.OID, asn1tree.Value, bool) {
	return nil, asn1tree.Value{}, false
}

// handle answers one datagram; nil means no answer (s.why says why).
// It never panics on any input and allocates nothing once s has grown.
func (r *Responder) handle(pkt []byte, s *scratch) []byte {
	st := &r.stats
	st.InPkts.Add(1)
	q := &s.req
	s.why = nil
	if err := q.decode(pkt); err != nil {
		switch err {
		case errVersion:
			st.InBadVersions.Add(1)
		case errNotRequest:
			st.InNotRequests.Add(1)
		default:
			st.InASNParseErrs.Add(1)
		}
		s.why = err
		return nil
	}
	set := r.live.Load()
	if subtle.ConstantTimeCompare(q.community, set.community) != 1 {
		st.InBadCommunityNames.Add(1)
		s.why = errCommunity
		return nil
	}
	view := r.view()
	if view == nil {
		view = emptyView{}
	}
	// The values are encoded when the switch below ends: what the view
	// pinned for them (suppliers' values) can then be reused.
	if rel, ok := view.(interface{ Release() }); ok {
		defer rel.Release()
	}
	if set.sys != nil {
		s.sv = sysView{sys: set.sys, main: view, ticks: ticks(r.start, r.now())}
		view = &s.sv
		// The scratch outlives the request: it must not keep the
		// snapshot (and a tree suppliers may since have left) alive.
		defer func() { s.sv = sysView{} }()
	}
	w := &s.resp
	w.reset(q, set.maxMsgSize)
	var status, index int
	switch q.pduType {
	case gosnmp.GetRequest:
		st.InGetRequests.Add(1)
		status, index = get(view, q, w)
	case gosnmp.GetNextRequest:
		st.InGetNexts.Add(1)
		status, index = getNext(view, q, w)
	case gosnmp.GetBulkRequest:
		st.InGetBulks.Add(1)
		status, index = getBulk(view, q, s, set.maxRepetitions)
	default:
		st.InSetRequests.Add(1)
		status, index = refuseSet(q, w)
	}
	return r.finish(w, status, index, s)
}

// finish sends tooBig in place of a response over the size limit.
func (r *Responder) finish(w *response, status, index int, s *scratch) []byte {
	st := &r.stats
	out := w.finish(status, index)
	if out == nil {
		w.clear()
		status, index = int(gosnmp.TooBig), 0
		if out = w.finish(status, index); out == nil {
			st.SilentDrops.Add(1)
			s.why = errTooBigToAnswer
			return nil
		}
	}
	switch gosnmp.SNMPError(status) {
	case gosnmp.TooBig:
		st.OutTooBigs.Add(1)
	case gosnmp.NoSuchName:
		st.OutNoSuchNames.Add(1)
	case gosnmp.NotWritable:
		st.OutNotWritables.Add(1)
	case gosnmp.GenErr:
		st.OutGenErrs.Add(1)
	}
	st.OutGetResponses.Add(1)
	return out
}

// fail turns the response into an error response echoing the request's
// varbinds (RFC 3416 4.2.1, RFC 1157 4.1.2: "of identical form").
func fail(q *request, w *response, status gosnmp.SNMPError, i int) (int, int) {
	w.clear()
	w.buf = append(w.buf, q.vbl...)
	return int(status), i + 1
}

// tooBig is the answer once the varbinds alone exceed the limit; finish
// turns it into tooBig, without encoding the rest.
func tooBig(w *response) (int, int) {
	w.clear()
	return int(gosnmp.TooBig), 0
}

func get(view asn1tree.View, q *request, w *response) (int, int) {
	v1 := q.version == int(gosnmp.Version1)
	for i, name := range q.names {
		v, ok := view.Get(name)
		if v1 && (!ok || v.Kind == asn1tree.Counter64) {
			return fail(q, w, gosnmp.NoSuchName, i)
		}
		if !ok {
			w.buf = appendException(w.buf, name, missing(view, name))
		} else if w.buf, ok = appendVarBind(w.buf, name, &v); !ok {
			return fail(q, w, gosnmp.GenErr, i)
		}
		if len(w.buf)-w.head > w.max {
			return tooBig(w)
		}
	}
	return 0, 0
}

// missing tells noSuchInstance from noSuchObject: an instance is missing
// when something exists under its name minus the last arc.
func missing(view asn1tree.View, name asn1tree.OID) gosnmp.Asn1BER {
	if len(name) > 1 {
		parent := name[:len(name)-1]
		if o, _, ok := view.Search(parent, true, nil); ok && o.HasPrefix(parent) {
			return gosnmp.NoSuchInstance
		}
	}
	return gosnmp.NoSuchObject
}

// next is the entry after name that the version can carry: SNMPv1 skips
// Counter64 (RFC 3584 4.2.2.1).
func next(view asn1tree.View, name asn1tree.OID, v1 bool) (asn1tree.OID, asn1tree.Value, bool) {
	o, v, ok := view.Search(name, false, nil)
	for v1 && ok && v.Kind == asn1tree.Counter64 {
		o, v, ok = view.Search(o, false, nil)
	}
	return o, v, ok
}

func getNext(view asn1tree.View, q *request, w *response) (int, int) {
	v1 := q.version == int(gosnmp.Version1)
	for i, name := range q.names {
		o, v, ok := next(view, name, v1)
		switch {
		case !ok && v1:
			return fail(q, w, gosnmp.NoSuchName, i)
		case !ok:
			w.buf = appendException(w.buf, name, gosnmp.EndOfMibView)
		default:
			if w.buf, ok = appendVarBind(w.buf, o, &v); !ok {
				return fail(q, w, gosnmp.GenErr, i)
			}
		}
		if len(w.buf)-w.head > w.max {
			return tooBig(w)
		}
	}
	return 0, 0
}

// refuseSet answers a Set on this read-only agent; without varbinds there
// is nothing to refuse.
func refuseSet(q *request, w *response) (int, int) {
	if len(q.names) == 0 {
		return 0, 0
	}
	if q.version == int(gosnmp.Version1) {
		return fail(q, w, gosnmp.NoSuchName, 0)
	}
	return fail(q, w, gosnmp.NotWritable, 0)
}
