package responder

import (
	"crypto/cipher"
	"crypto/subtle"
	"hash"
	"net/netip"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/snmpreq"
)

// scratch is the memory one request needs, reused from request to request
// by the goroutine that owns it.
type scratch struct {
	req         request
	resp        response
	rules       snmpreq.Scratch
	next        nextAnswer // GetNext, GetBulk: the response as snmpreq builds it
	sv          sysView    // the system group before the tree's view
	fv          filterView // v3: the subtrees a user may read
	m           v3msg      // v3: the message's header
	plain       []byte     // v3: the decrypted scopedPDU, then the response's
	out         []byte     // v3: the response message
	vb          []byte     // v3: a Report's varbind
	rep         []byte     // v3: a Report's PDU
	iv          [16]byte   // v3: AES IV
	digest, sum []byte     // v3: HMACs
	mac         hash.Hash  // v3: the HMAC of macUser
	macUser     *user
	block       cipher.Block // v3: the AES cipher of blockUser
	blockUser   *user
	why         error          // why the last packet got no answer, for the log
	from        netip.AddrPort // the manager: walks are told apart by its address
}

// handle answers one datagram; nil means no answer (s.why says why).
// It never panics on any input and allocates nothing once s has grown
// (SNMPv3 allocates for its HMAC and cipher).
func (r *Responder) handle(pkt []byte, s *scratch) []byte {
	st := &r.stats
	st.InPkts.Add(1)
	q := &s.req
	s.why = nil
	set := r.live.Load()
	if err := q.decode(pkt); err != nil {
		if err == errVersion && q.version == int(gosnmp.Version3) && r.engine != nil {
			return r.handleV3(pkt, s, set)
		}
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
	if set.community == nil {
		st.InBadVersions.Add(1)
		s.why = errVersionOff
		return nil
	}
	if subtle.ConstantTimeCompare(q.community, set.community) != 1 {
		st.InBadCommunityNames.Add(1)
		s.why = errCommunity
		return nil
	}
	return r.answer(q, s, set, nil, set.maxMsgSize)
}

// answer builds the response to a decoded request: for v3 (u set) only
// its PDU, of at most max octets, with what u may read.
func (r *Responder) answer(q *request, s *scratch, set *settings, u *user, max int) []byte {
	st := &r.stats
	op := q.op()
	first, _ := snmpreq.First(op, q.names, int(q.a))
	mo := r.moments.Open(r.moments.Lookup(s.from, first))
	// The values are encoded when the switch below ends: what the view
	// pinned for them (suppliers' values) can then be reused.
	defer mo.Release()
	// The scratch outlives the request: it must not keep the snapshot
	// (and a tree suppliers may since have left) alive.
	defer s.forget()
	view := mo.View
	if set.sys != nil {
		s.sv = sysView{sys: set.sys, mgmt: mgmtView{r}, main: view, ticks: ticks(r.start, r.now())}
		view = &s.sv
	}
	if u != nil && len(u.Subtrees) > 0 {
		s.fv = filterView{main: view, subs: u.Subtrees}
		view = &s.fv
	}
	w := &s.resp
	w.reset(q, max)
	w.v3 = u != nil
	var status, index int
	switch q.pduType {
	case gosnmp.GetRequest:
		st.InGetRequests.Add(1)
		status, index = get(view, q, w)
	case gosnmp.GetNextRequest, gosnmp.GetBulkRequest:
		if op == snmpreq.GetNext {
			st.InGetNexts.Add(1)
		} else {
			st.InGetBulks.Add(1)
		}
		status, index = s.serve(view, q, set.maxRepetitions)
	default:
		st.InSetRequests.Add(1)
		status, index = refuseSet(q, w)
	}
	out, status := r.finish(w, status, index, s)
	if out != nil && status == 0 {
		r.moments.Answered(&mo, s.from, first != nil, s.rules.Names(), r.now())
	}
	return out
}

// op is the request's kind for snmpreq (0 for a Set).
func (q *request) op() snmpreq.Op {
	switch q.pduType {
	case gosnmp.GetRequest:
		return snmpreq.Get
	case gosnmp.GetNextRequest:
		return snmpreq.GetNext
	case gosnmp.GetBulkRequest:
		return snmpreq.GetBulk
	}
	return 0
}

// forget drops what the scratch refers to of the request's view.
func (s *scratch) forget() {
	s.sv = sysView{}
	s.fv = filterView{}
	s.rules.Forget()
	s.next.forget()
}

// finish sends tooBig in place of a response over the size limit; it
// returns the message and the status it carries.
func (r *Responder) finish(w *response, status, index int, s *scratch) ([]byte, int) {
	st := &r.stats
	out := w.finish(status, index)
	if out == nil {
		w.clear()
		status, index = int(gosnmp.TooBig), 0
		if out = w.finish(status, index); out == nil {
			st.SilentDrops.Add(1)
			s.why = errTooBigToAnswer
			return nil, status
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
	return out, status
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

// missing is the exception for a name without a value (asn1tree.Defines).
func missing(view asn1tree.View, name asn1tree.OID) gosnmp.Asn1BER {
	if asn1tree.Defines(view, name) {
		return gosnmp.NoSuchInstance
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
