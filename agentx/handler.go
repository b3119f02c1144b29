package agentx

import (
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/internal/foldlog"
	"github.com/perfagent/subagent/snmpreq"
)

// responder answers the master's requests for one session, by snmpreq's
// rules. Sets, Pings and whatever needs no view are answered on the
// session's reader; so are the reads whose view is at hand (a
// transaction's next PDU, a walk's next request). A read that must load
// the current moment, which may wait for fresh values (refresh.snmp_wait;
// the first snapshot without limit), is answered apart (session.go).
type responder struct {
	scope   *scope
	moments snmpreq.Moments[uint64] // the walks are kept by session (peer)
	views   viewCache
	peer    uint64
	own     scratch // answer's

	writer  Writer       // nil: every Set is refused
	pending *pendingSet  // the Set between TestSet and its end; reader only
	setLog  *foldlog.Log // failed Sets; nil: not logged
}

// scratch is the memory answering one read PDU needs, reused by the
// goroutine that owns it.
type scratch struct {
	rules snmpreq.Scratch
	ans   rangeAnswer
}

// newResponder answers from the current view of load for each transaction.
func newResponder(sc *scope, load func() asn1tree.View) *responder {
	return &responder{scope: sc, moments: snmpreq.Moments[uint64]{Src: asn1tree.Latest(load)}}
}

// op is the PDU's read request kind; 0 for the others.
func (p *packet) op() snmpreq.Op {
	switch p.typ {
	case typeGet:
		return snmpreq.Get
	case typeGetNext:
		return snmpreq.GetNext
	case typeGetBulk:
		return snmpreq.GetBulk
	}
	return 0
}

// pass is how a read PDU gets its transaction's view: s is the slot,
// locked for it unless another PDU of the transaction holds it, and load
// tells that the view is still to be loaded, at step's moment.
type pass struct {
	s      *viewSlot
	step   asn1tree.Step
	locked bool
	load   bool
}

// ready reports whether the PDU can be answered without waiting.
func (p *pass) ready() bool { return p.locked && !p.load }

// plan finds req's transaction's slot, or makes one. A new transaction
// that goes on with a walk loads the walk's moment at once (Src returns
// it without waiting); one of the current moment is left to take.
func (r *responder) plan(req *packet, now time.Time) pass {
	if s := r.views.find(req.transactionID, now); s != nil {
		return pass{s: s, locked: s.use.TryLock()}
	}
	var first asn1tree.OID
	if sr, ok := snmpreq.First(req.op(), req.ranges, int(req.nonRepeaters)); ok {
		first = sr.start
	}
	p := pass{s: r.views.add(req.transactionID, now), step: r.moments.Lookup(r.peer, first), locked: true, load: true}
	if !snmpreq.Waits(p.step) {
		r.take(&p)
	}
	return p
}

// take waits for the PDU's turn at its slot and loads the view if due:
// the wait for fresh values happens here.
func (r *responder) take(p *pass) {
	if !p.locked {
		p.s.use.Lock()
		p.locked = true
	}
	if p.load {
		p.s.mo = r.moments.Open(p.step)
		p.load = false
	}
}

// prelude answers whatever PDU is not a read; done is false for a read,
// which read answers. due is false when no Response is due (CleanupSet).
// sessionID is the session's own, 0 before Open.
func (r *responder) prelude(req, resp *packet, sessionID uint32) (done, due bool) {
	resp.header = header{
		version:       version1,
		typ:           typeResponse,
		flags:         req.flags & flagNetworkByteOrder,
		sessionID:     req.sessionID,
		transactionID: req.transactionID,
		packetID:      req.packetID,
	}
	resp.varbinds = resp.varbinds[:0]
	resp.sysUpTime, resp.resError, resp.resIndex = 0, NoError, 0

	if req.typ == typeCleanupSet {
		return true, r.set(req, resp) // RFC 2741 7.2.4.4: no response
	}
	if req.sessionID != sessionID {
		resp.resError = NotOpen
		return true, true
	}
	if req.flags&flagNonDefaultContext != 0 && req.typ.hasContext() {
		resp.resError = UnsupportedContext // we register in the default context only
		return true, true
	}
	switch req.typ {
	case typeGet, typeGetNext, typeGetBulk:
		return false, true
	case typeTestSet, typeCommitSet, typeUndoSet:
		return true, r.set(req, resp)
	case typePing:
	default:
		resp.resError = GenErr // a PDU only a master should receive
	}
	return true, true
}

// answer fills resp with the Response to req and reports whether one is
// due, all on the caller's goroutine.
func (r *responder) answer(req, resp *packet, sessionID uint32, now time.Time) bool {
	if done, due := r.prelude(req, resp, sessionID); done {
		return due
	}
	p := r.plan(req, now)
	r.take(&p)
	r.read(&r.own, req, resp, p.s, now)
	return true
}

// read answers a Get, GetNext or GetBulk from s, whose use it holds and
// ends, and records the answer (its data's age, where a walk goes on).
func (r *responder) read(sc *scratch, req, resp *packet, s *viewSlot, now time.Time) {
	defer r.views.done(s)
	v := s.mo.View
	op := req.op()
	if op == snmpreq.Get {
		r.get(req, resp, v)
	} else {
		sc.ans.reset(r.scope, v, resp, req.ranges)
		res := sc.rules.Serve(&sc.ans, &snmpreq.Request{Op: op, N: len(req.ranges),
			NonRepeaters: int(req.nonRepeaters), MaxRepetitions: int(req.maxRepetitions), MaxVarBinds: maxVarBinds})
		switch res.Err {
		case snmpreq.TooBig:
			resp.varbinds, resp.resError = resp.varbinds[:0], TooBig
		case snmpreq.GenErr, snmpreq.NoSuchName:
			resp.varbinds, resp.resError, resp.resIndex = resp.varbinds[:0], GenErr, uint16(res.Index+1)
		}
	}
	if resp.resError == NoError {
		r.views.mu.Lock() // s.mo names the walk the transaction goes on with
		r.moments.Answered(&s.mo, r.peer, op != snmpreq.Get, sc.rules.Names(), now)
		r.views.mu.Unlock()
	}
	// They may point into the view's memory.
	sc.rules.Forget()
	sc.ans.forget()
}

func (r *responder) get(req, resp *packet, v asn1tree.View) {
	for i := range req.ranges {
		name := req.ranges[i].start
		val, present := r.scope.get(v, name)
		if present && servable(val) {
			resp.varbinds = append(resp.varbinds, valueVarBind(name, val))
			continue
		}
		// noSuchInstance under an object we serve (asn1tree.Defines),
		// noSuchObject elsewhere and outside what we registered.
		typ := vbNoSuchObject
		if v != nil && r.scope.contains(name) && asn1tree.Defines(v, name) {
			typ = vbNoSuchInstance
		}
		resp.varbinds = append(resp.varbinds, varbind{typ: typ, name: name})
	}
}

// rangeAnswer is the Response to a GetNext or GetBulk as snmpreq builds
// it: each SearchRange searched within the scope, endOfMibView carrying
// the range's start (RFC 2741 7.2.3.2).
type rangeAnswer struct {
	scope *scope
	view  asn1tree.View
	resp  *packet
	cur   []searchRange // where each range stands
	size  int           // of the VarBinds appended
}

func (a *rangeAnswer) reset(sc *scope, v asn1tree.View, resp *packet, ranges []searchRange) {
	a.scope, a.view, a.resp, a.size = sc, v, resp, 0
	a.cur = append(a.cur[:0], ranges...)
}

func (a *rangeAnswer) forget() {
	a.view, a.resp = nil, nil
	clear(a.cur)
}

func (a *rangeAnswer) add(vb varbind) {
	a.resp.varbinds = append(a.resp.varbinds, vb)
	a.size += varbindLen(&a.resp.varbinds[len(a.resp.varbinds)-1])
}

func (a *rangeAnswer) Next(i int) (asn1tree.OID, bool, bool) {
	c := &a.cur[i]
	if o, val, ok := a.scope.search(a.view, c.start, c.include, c.end); ok {
		a.add(valueVarBind(o, val))
		c.start, c.include = o, false
		return o, true, true
	}
	a.add(varbind{typ: vbEndOfMibView, name: c.start})
	return nil, false, true
}

func (a *rangeAnswer) End(i int) { a.add(varbind{typ: vbEndOfMibView, name: a.cur[i].start}) }
func (a *rangeAnswer) Mark() int { return len(a.resp.varbinds) }

func (a *rangeAnswer) Undo(mark int) {
	for i := mark; i < len(a.resp.varbinds); i++ {
		a.size -= varbindLen(&a.resp.varbinds[i])
	}
	a.resp.varbinds = a.resp.varbinds[:mark]
}

func (a *rangeAnswer) Fits() bool { return a.size <= maxPayload-responseFixedLen }

// responseFixedLen is the Response payload before its VarBinds.
const responseFixedLen = 8

// valueVarBind maps an asn1tree value to its wire VarBind.
func valueVarBind(name asn1tree.OID, v asn1tree.Value) varbind {
	vb := varbind{name: name, num: v.Num}
	switch v.Kind {
	case asn1tree.Integer32:
		vb.typ = vbInteger
	case asn1tree.Gauge32:
		vb.typ = vbGauge32
	case asn1tree.Counter32:
		vb.typ = vbCounter32
	case asn1tree.Counter64:
		vb.typ = vbCounter64
	case asn1tree.TimeTicks:
		vb.typ = vbTimeTicks
	case asn1tree.OctetString:
		vb.typ, vb.str = vbOctetString, v.Str
	case asn1tree.ObjectIdentifier:
		vb.typ, vb.oid = vbOID, v.OID
	default:
		vb.typ = vbNoSuchInstance
	}
	return vb
}

// oidLen is the encoded size of an OID.
func oidLen(o asn1tree.OID) int {
	n := len(o)
	if n >= 5 && [4]uint32(o[:4]) == internetPrefix && o[4] != 0 && o[4] <= 255 {
		n -= 5
	}
	return 4 + 4*n
}

// varbindLen is the encoded size of a VarBind.
func varbindLen(v *varbind) int {
	n := 4 + oidLen(v.name)
	switch v.typ {
	case vbInteger, vbCounter32, vbGauge32, vbTimeTicks:
		n += 4
	case vbCounter64:
		n += 8
	case vbOctetString, vbOpaque, vbIPAddress:
		n += 4 + (len(v.str)+3)&^3
	case vbOID:
		n += oidLen(v.oid)
	}
	return n
}
