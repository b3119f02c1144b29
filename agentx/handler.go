package agentx

import (
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/internal/foldlog"
)

// responder answers the master's requests for one session. It runs on the
// session's reader goroutine only and never blocks: every answer comes from
// the View the cache hands it.
type responder struct {
	scope   *scope
	views   viewCache
	cursors []searchRange // GetBulk scratch, reused

	// walks, when set, keeps walks consistent across transactions: a
	// new transaction that goes on from where a response of this session
	// (peer) ended is answered from that response's moment.
	walks *asn1tree.Walks[uint64]
	peer  uint64
	names []asn1tree.OID     // a response's varbind names, reused
	ages  *asn1tree.DataAges // nil: not kept

	writer  Writer       // nil: every Set is refused
	pending *pendingSet  // the Set between TestSet and its end
	setLog  *foldlog.Log // failed Sets; nil: not logged
}

// newResponder answers from the current view of load for each transaction.
func newResponder(sc *scope, load func() asn1tree.View) *responder {
	return &responder{scope: sc, views: viewCache{src: asn1tree.Latest(load)}}
}

// slot returns the view of req's transaction. A new transaction whose
// GetNext or GetBulk goes on with a walk gets the walk's moment.
func (r *responder) slot(req *packet, now time.Time) *viewSlot {
	if s := r.views.find(req.transactionID, now); s != nil {
		return s
	}
	var step asn1tree.Step
	if first := walkStart(req); first != nil && r.walks != nil {
		step = r.walks.Lookup(r.peer, first)
	}
	return r.views.load(req.transactionID, now, step)
}

// walkStart is the OID that tells which walk a GetNext or GetBulk goes
// on with: its first search range's start, for a GetBulk the first
// repeater's where it has one. nil for other PDUs.
func walkStart(req *packet) asn1tree.OID {
	switch {
	case len(req.ranges) == 0:
		return nil
	case req.typ == typeGetNext:
		return req.ranges[0].start
	case req.typ == typeGetBulk:
		return req.ranges[min(int(req.nonRepeaters), len(req.ranges)-1)].start
	}
	return nil
}

// ended records where the response of s's transaction ended, and the age
// of the data it answered from.
func (r *responder) ended(s *viewSlot, resp *packet, walk bool, now time.Time) {
	if r.ages != nil {
		r.ages.Record(s.view, now)
	}
	if !walk || r.walks == nil || s.at == nil || len(resp.varbinds) == 0 {
		return
	}
	// An endOfMibView names the range's start, from which no manager goes
	// on: recorded, it would make the next walk from that start (a table
	// read again while it was empty) continue this one, at its moment.
	for i := range resp.varbinds {
		if resp.varbinds[i].typ != vbEndOfMibView {
			r.names = append(r.names, resp.varbinds[i].name)
		}
	}
	if len(r.names) == 0 {
		return
	}
	s.step = r.walks.Record(s.step, r.peer, s.at, r.names)
	clear(r.names) // they may point into the view's memory
	r.names = r.names[:0]
}

// answer fills resp with the Response to req and reports whether one is due
// (CleanupSet gets none). sessionID is the session's own, 0 before Open.
func (r *responder) answer(req, resp *packet, sessionID uint32, now time.Time) bool {
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
		return r.set(req, resp) // RFC 2741 7.2.4.4: no response
	}
	if req.sessionID != sessionID {
		resp.resError = NotOpen
		return true
	}
	if req.flags&flagNonDefaultContext != 0 && req.typ.hasContext() {
		resp.resError = UnsupportedContext // we register in the default context only
		return true
	}
	switch req.typ {
	case typeGet:
		s := r.slot(req, now)
		r.get(req, resp, s.view)
		r.ended(s, resp, false, now)
	case typeGetNext:
		s := r.slot(req, now)
		for i := range req.ranges {
			r.next(resp, s.view, &req.ranges[i])
		}
		r.ended(s, resp, true, now)
	case typeGetBulk:
		s := r.slot(req, now)
		r.bulk(req, resp, s.view)
		r.ended(s, resp, true, now)
	case typeTestSet, typeCommitSet, typeUndoSet:
		return r.set(req, resp)
	case typePing:
	default:
		resp.resError = GenErr // a PDU only a master should receive
	}
	return true
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

// next appends the answer to one SearchRange; endOfMibView carries the
// range's start as its name (RFC 2741 7.2.3.2).
func (r *responder) next(resp *packet, v asn1tree.View, sr *searchRange) bool {
	if o, val, ok := r.scope.search(v, sr.start, sr.include, sr.end); ok {
		resp.varbinds = append(resp.varbinds, valueVarBind(o, val))
		return true
	}
	resp.varbinds = append(resp.varbinds, varbind{typ: vbEndOfMibView, name: sr.start})
	return false
}

// bulk answers GetBulk (RFC 2741 7.2.3.3): the non-repeaters once, then up
// to max-repetitions rows of the repeaters, each row continuing after the
// previous one. It stops early on a row that is all endOfMibView or when
// another row would exceed maxVarBinds or maxPayload.
func (r *responder) bulk(req, resp *packet, v asn1tree.View) {
	nr := min(int(req.nonRepeaters), len(req.ranges))
	for i := 0; i < nr; i++ {
		r.next(resp, v, &req.ranges[i])
	}
	r.cursors = append(r.cursors[:0], req.ranges[nr:]...)
	if len(r.cursors) == 0 {
		return
	}
	size := 0
	for i := range resp.varbinds {
		size += varbindLen(&resp.varbinds[i])
	}
	for rep := 0; rep < int(req.maxRepetitions); rep++ {
		if len(resp.varbinds)+len(r.cursors) > maxVarBinds {
			return
		}
		rowStart, rowSize, more := len(resp.varbinds), 0, false
		for j := range r.cursors {
			c := &r.cursors[j]
			if r.next(resp, v, c) {
				more = true
				c.start, c.include = resp.varbinds[len(resp.varbinds)-1].name, false
			}
			rowSize += varbindLen(&resp.varbinds[len(resp.varbinds)-1])
		}
		if rep > 0 && size+rowSize > maxPayload-responseFixedLen {
			resp.varbinds = resp.varbinds[:rowStart]
			return
		}
		size += rowSize
		if !more {
			return
		}
	}
}

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
