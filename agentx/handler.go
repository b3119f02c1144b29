package agentx

import (
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

// responder answers the master's requests for one session. It runs on the
// session's reader goroutine only and never blocks: every answer comes from
// the View the cache hands it.
type responder struct {
	scope   *scope
	views   viewCache
	cursors []searchRange // GetBulk scratch, reused
}

func newResponder(sc *scope, load func() asn1tree.View) *responder {
	return &responder{scope: sc, views: viewCache{load: load}}
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
		return false // RFC 2741 7.2.4.4: no response; we hold no Set state to free
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
		r.get(req, resp, r.views.get(req.transactionID, now))
	case typeGetNext:
		v := r.views.get(req.transactionID, now)
		for i := range req.ranges {
			r.next(resp, v, &req.ranges[i])
		}
	case typeGetBulk:
		r.bulk(req, resp, r.views.get(req.transactionID, now))
	case typeTestSet:
		if len(req.varbinds) > 0 {
			resp.resError, resp.resIndex = NotWritable, 1 // read-only agent
		}
	case typeCommitSet:
		resp.resError = CommitFailed // no TestSet of ours ever succeeds
	case typeUndoSet, typePing:
		// Nothing was changed, so undo succeeds; Ping is answered alike.
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
		// noSuchInstance for an entry without a value or when an instance
		// of the same length lives beside the name (a missing row, a
		// scalar's wrong index); noSuchObject otherwise.
		typ := vbNoSuchObject
		if present || r.scope.hasSibling(v, name) {
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
