// Package snmpreq owns the rules of the SNMP read requests that both front
// ends answer, the standalone responder (responder/) and the AgentX
// session (agentx/): what a GetNext and a GetBulk return (RFC 3416 4.2.2,
// 4.2.3; RFC 2741 7.2.3), how non-repeaters and max-repetitions are
// clamped, where the limits may cut an answer, which OID tells the walk a
// request goes on with, and when a moment's view is released and the age
// of its data recorded. The front ends only decode, call it and encode:
// an Answer is their response under construction, each varbind searched
// and encoded their way (scope, SNMPv1's Counter64 rule, wire format).
//
// agentx/conformance_test.go runs the same cases against both front ends:
// the responder over UDP, the AgentX subagent behind a real snmpd, and
// the subagent asked with AgentX GetBulk PDUs (which snmpd never sends).
package snmpreq

import "github.com/perfagent/subagent/asn1tree"

// Op is the kind of a read request.
type Op uint8

const (
	Get Op = iota + 1
	GetNext
	GetBulk
)

// Request is what the rules need of a decoded request.
type Request struct {
	Op Op
	N  int // varbinds (AgentX: SearchRanges)
	// NonRepeaters and MaxRepetitions of a GetBulk, as received; negative
	// values count as 0 and non-repeaters beyond N as N (RFC 3416 4.2.3).
	NonRepeaters, MaxRepetitions int
	// V1: an SNMPv1 GetNext that finds nothing is noSuchName, not
	// endOfMibView (RFC 1157 4.1.3).
	V1 bool
	// MaxVarBinds caps the varbinds of a GetBulk's answer, never inside its
	// non-repeaters and first repetition; 0: no cap.
	MaxVarBinds int
}

// Answer is a front end's response under construction.
type Answer interface {
	// Next searches the entry after the cursor of request varbind i (at
	// first the request's name, for AgentX its SearchRange) and appends
	// it, moving the cursor to it; or, when there is none, appends
	// endOfMibView named after the cursor. found tells which; ok false:
	// the entry cannot be encoded (genErr).
	Next(i int) (name asn1tree.OID, found, ok bool)
	// End appends endOfMibView for varbind i, whose search already ended.
	End(i int)
	// Mark and Undo take back what was appended after the mark.
	Mark() int
	Undo(mark int)
	// Fits reports whether what was appended is within the size limit.
	Fits() bool
}

// Error is how a request failed; Result.Index names the varbind.
type Error uint8

const (
	NoError    Error = iota
	TooBig           // the answer cannot be cut to fit: send none of it
	GenErr           // a value cannot be encoded
	NoSuchName       // SNMPv1 GetNext past the end
)

// Result is the outcome: Index is the 0-based request varbind at fault.
type Result struct {
	Err   Error
	Index int
}

// Scratch is the memory the rules need for one request, reused by the
// goroutine that owns it.
type Scratch struct {
	names []asn1tree.OID // found names, where a walk goes on
	ended []bool         // GetBulk: the repeater reached endOfMibView
}

// Names are the names of the entries the last answer found, in order
// (endOfMibView left out: no manager goes on from it). They point into
// the view's memory: Forget them once the answer is encoded.
func (s *Scratch) Names() []asn1tree.OID { return s.names }

// Forget drops the names, which may keep a snapshot alive.
func (s *Scratch) Forget() {
	clear(s.names)
	s.names = s.names[:0]
}

// Serve answers a GetNext or GetBulk into a; a Get is the front end's own
// (its exceptions depend on its scope).
func (s *Scratch) Serve(a Answer, q *Request) Result {
	s.Forget()
	if q.Op == GetBulk {
		return s.bulk(a, q)
	}
	return s.next(a, q)
}

// next: each varbind's successor (RFC 3416 4.2.2).
func (s *Scratch) next(a Answer, q *Request) Result {
	for i := range q.N {
		o, found, ok := a.Next(i)
		switch {
		case !ok:
			return Result{GenErr, i}
		case !found && q.V1:
			return Result{NoSuchName, i}
		case found:
			s.names = append(s.names, o)
		}
		if !a.Fits() {
			return Result{Err: TooBig}
		}
	}
	return Result{}
}

// Repeaters clamps a GetBulk's fields: n non-repeaters of q.N varbinds,
// m repetitions.
func Repeaters(q *Request) (n, m int) {
	return min(max(q.NonRepeaters, 0), q.N), max(q.MaxRepetitions, 0)
}

// bulk answers a GetBulk (RFC 3416 4.2.3, RFC 2741 7.2.3.3): the n
// non-repeaters once, then up to m repetitions of the repeaters, each
// going on from where the one before stopped; a repeater that reached
// the end stays at endOfMibView, and a repetition that is all
// endOfMibView is the last. The cap cuts after any varbind but never
// inside the first repetition; the size limit cuts after the last
// varbind that fits, anywhere after the non-repeaters (RFC 3416: "the
// number of variable bindings removed has no relationship to the values
// of N, M, or R"); nothing fitting, or non-repeaters that do not fit, is
// tooBig.
func (s *Scratch) bulk(a Answer, q *Request) Result {
	n, m := Repeaters(q)
	for i := range n {
		o, found, ok := a.Next(i)
		if !ok {
			return Result{GenErr, i}
		}
		if found {
			s.names = append(s.names, o)
		}
		if !a.Fits() {
			return Result{Err: TooBig}
		}
	}
	r := q.N - n
	if r == 0 || m == 0 {
		return Result{}
	}
	limit := -1 // no cap
	if q.MaxVarBinds > 0 {
		limit = max(q.MaxVarBinds, q.N)
	}
	s.ended = s.ended[:0]
	for range r {
		s.ended = append(s.ended, false)
	}
	count := n
	for range m {
		allEnded := true
		for j := range r {
			if count == limit {
				return Result{}
			}
			mark, named := a.Mark(), len(s.names)
			if s.ended[j] {
				a.End(n + j)
			} else {
				o, found, ok := a.Next(n + j)
				switch {
				case !ok:
					return Result{GenErr, n + j}
				case found:
					allEnded = false
					s.names = append(s.names, o)
				default:
					s.ended[j] = true
				}
			}
			if !a.Fits() {
				a.Undo(mark)
				s.names = s.names[:named]
				if count == 0 {
					return Result{Err: TooBig}
				}
				return Result{}
			}
			count++
		}
		if allEnded {
			break
		}
	}
	return Result{}
}

// First is the item that tells which walk a GetNext or GetBulk goes on
// with: the first, for a GetBulk the first repeater where it has one
// (the non-repeaters, sysUpTime say, start no walk). ok is false for
// other requests and for none.
func First[T any](op Op, items []T, nonRepeaters int) (first T, ok bool) {
	switch {
	case len(items) == 0:
	case op == GetNext:
		return items[0], true
	case op == GetBulk:
		return items[min(max(nonRepeaters, 0), len(items)-1)], true
	}
	return first, false
}
