package agentx

import (
	"fmt"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/internal/foldlog"
)

// Writer takes the master's Set transactions (RFC 2741 7.2.4) for the
// writable objects under the registered subtrees. Without one (Config.Writer
// nil) every Set is refused with notWritable.
//
// The master sends one TestSet holding every VarBind of one SNMP SET that
// falls to this session, then CommitSet, then CleanupSet; UndoSet instead
// of CleanupSet when a commit anywhere failed, CleanupSet alone when a test
// anywhere failed. Writer methods run on the session's reader and must
// answer within the master's timeout (net-snmp: 1 s): they work in memory.
type Writer interface {
	// TestSet checks the whole list, every VarBind against every other,
	// and prepares the change without applying any of it. A refusal is a
	// *SetError naming the RFC 3416 error and the VarBind at fault.
	TestSet(vbs []VarBind) (Change, *SetError)
}

// Change is a tested Set, applied by Commit.
type Change interface {
	// Commit applies the change; an error answers commitFailed, and the
	// master then asks for Undo.
	Commit() error
	// Undo reverts what Commit did (or, after a failed Commit, what part
	// of it was done); it is also asked after a successful Commit when
	// another subagent's commit failed. An error answers undoFailed.
	Undo() error
	// Cleanup ends the transaction, whatever came before: after Commit
	// the change stays, after Undo it stays reverted, after a refused
	// test elsewhere nothing was applied. It frees what TestSet prepared.
	Cleanup()
}

// SetError is a refused TestSet: Code is the RFC 3416 error-status
// (WrongType, WrongValue, InconsistentValue, NoCreation, ...), Index the
// 1-based VarBind at fault, Err says why for the log.
type SetError struct {
	Code  ErrorCode
	Index int
	Err   error
}

func (e *SetError) Error() string {
	return fmt.Sprintf("%s at varbind %d: %v", e.Code, e.Index, e.Err)
}

// Refuse is a SetError for the VarBind at index i (1-based).
func Refuse(code ErrorCode, i int, format string, args ...any) *SetError {
	return &SetError{Code: code, Index: i, Err: fmt.Errorf(format, args...)}
}

// pendingSet is the one transaction a session has between TestSet and
// CleanupSet or UndoSet: the master runs one SET at a time.
type pendingSet struct {
	tid       uint32
	change    Change // nil after a refused test
	committed bool
	// last answer, replayed to a resent CommitSet or UndoSet (the master
	// resends with the same IDs when we were slow, net-snmp issue #691)
	lastType   pduType
	lastPacket uint32
	lastCode   ErrorCode
	lastIndex  uint16
}

// setValue is the asn1tree value of a wire VarBind of a TestSet; ok is
// false for a type the tree never serves (Null, IpAddress, Opaque, the
// exceptions), which the Writer sees as NoValue and refuses as wrongType.
func setValue(vb *varbind) asn1tree.Value {
	switch vb.typ {
	case vbInteger:
		return asn1tree.Value{Kind: asn1tree.Integer32, Num: uint64(int64(int32(uint32(vb.num))))}
	case vbGauge32:
		return asn1tree.Value{Kind: asn1tree.Gauge32, Num: vb.num}
	case vbCounter32:
		return asn1tree.Value{Kind: asn1tree.Counter32, Num: vb.num}
	case vbCounter64:
		return asn1tree.Value{Kind: asn1tree.Counter64, Num: vb.num}
	case vbTimeTicks:
		return asn1tree.Value{Kind: asn1tree.TimeTicks, Num: vb.num}
	case vbOctetString:
		return asn1tree.Value{Kind: asn1tree.OctetString, Str: vb.str}
	case vbOID:
		return asn1tree.Value{Kind: asn1tree.ObjectIdentifier, OID: vb.oid.Clone()}
	}
	return asn1tree.Value{}
}

// set answers TestSet, CommitSet, UndoSet and CleanupSet (the latter
// with no response: it returns false).
func (r *responder) set(req, resp *packet) bool {
	p := r.pending
	if p != nil && p.tid == req.transactionID && p.lastPacket == req.packetID && p.lastType == req.typ && req.typ != typeTestSet {
		if req.typ == typeCleanupSet {
			return false
		}
		resp.resError, resp.resIndex = p.lastCode, p.lastIndex // a resend: same answer, done once
		return true
	}
	switch req.typ {
	case typeTestSet:
		if p != nil {
			r.endSet() // the master forgot the last one (it restarted): free it
		}
		p = &pendingSet{tid: req.transactionID}
		r.pending = p
		resp.resError, resp.resIndex = r.testSet(req, p)
	case typeCommitSet:
		switch {
		case p == nil || p.tid != req.transactionID || p.change == nil:
			resp.resError = CommitFailed // no TestSet of ours succeeded
		default:
			p.committed = true
			if err := p.change.Commit(); err != nil {
				r.logSet("agentx: CommitSet failed", CommitFailed.String(), err)
				resp.resError = CommitFailed
			}
		}
	case typeUndoSet:
		if p != nil && p.tid == req.transactionID && p.change != nil && p.committed {
			if err := p.change.Undo(); err != nil {
				r.logSet("agentx: UndoSet failed", UndoFailed.String(), err)
				resp.resError = UndoFailed
			}
		}
		if resp.resError == NoError {
			r.endSet() // RFC 2741 7.3.1: no CleanupSet follows an UndoSet
		}
	case typeCleanupSet:
		if p != nil && p.tid == req.transactionID {
			r.endSet()
		}
		return false
	}
	if p := r.pending; p != nil {
		p.lastType, p.lastPacket, p.lastCode, p.lastIndex = req.typ, req.packetID, resp.resError, resp.resIndex
	}
	return true
}

// testSet checks req's VarBinds: all under what we registered, then the
// Writer's verdict on the whole list.
func (r *responder) testSet(req *packet, p *pendingSet) (ErrorCode, uint16) {
	if len(req.varbinds) == 0 {
		return NoError, 0
	}
	if r.writer == nil {
		return NotWritable, 1 // a read-only agent
	}
	vbs := make([]VarBind, len(req.varbinds))
	for i := range req.varbinds {
		vb := &req.varbinds[i]
		if !r.scope.contains(vb.name) {
			return NotWritable, uint16(i + 1)
		}
		vbs[i] = VarBind{OID: vb.name.Clone(), Value: setValue(vb)}
	}
	ch, serr := r.writer.TestSet(vbs)
	if serr != nil {
		if serr.Index < 1 || serr.Index > len(vbs) {
			serr.Index = 1 // the master makes an index out of range genErr
		}
		r.logSet("agentx: TestSet refused", serr.Code.String(), serr)
		return serr.Code, uint16(serr.Index)
	}
	p.change = ch
	return NoError, 0
}

// endSet cleans up the pending transaction, if any.
func (r *responder) endSet() {
	if p := r.pending; p != nil && p.change != nil {
		p.change.Cleanup()
	}
	r.pending = nil
}

// logSet logs a Set that failed, folded by the error-status answered
// (foldlog: a flood of refused SETs logs a line a minute per status, with
// their count); the last error in full as err.
func (r *responder) logSet(msg, status string, err error) {
	if r.setLog != nil {
		r.setLog.Note(foldlog.Source{}, msg, status, "err", foldlog.Text(err.Error()))
	}
}
