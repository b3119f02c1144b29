// Package agentx is the subagent side of the AgentX protocol (RFC 2741): it
// connects to an SNMP master agent such as net-snmp's snmpd over a Unix socket
// or TCP, registers subtrees and answers the master's Get, GetNext and GetBulk
// requests from an asn1tree.View. Set transactions go to Config.Writer
// (set.go): TestSet checks the whole VarBind list before anything
// changes, CommitSet applies, UndoSet reverts, CleanupSet ends. Without a
// Writer every Set is refused with notWritable.
//
// Config.Subtrees registers whole subtrees at Config.Priority;
// Config.Registrations adds registrations with their own priority and an
// optional range (RFC 2741 section 6.2.3), such as one row of several
// columns. Answers never leave what was registered, ranges included.
//
// It is hand-written because no Go AgentX module is reachable from our module
// proxy, and because the behaviour around restarts, timeouts and malformed
// input matters more to us than protocol coverage: the master drops a whole
// transport after one slow answer. The rules of Get, GetNext and GetBulk
// are package snmpreq's, shared with the standalone responder.
//
// The socket reader answers each PDU in turn from an in-memory view, with
// one exception: a read that loads the current moment (the first PDU of a
// transaction that goes on with no walk) may wait for fresh values, up to
// refresh.snmp_wait and without limit for the first snapshot. Such a PDU
// is answered by a goroutine of its own, so the PDUs behind it are not
// delayed, and its Response may come after theirs (RFC 2741 7.1: the master
// matches Responses by packetID). A session holds at most 16 PDUs at once;
// with all 16 waiting, the reader waits for one. TestSet, CommitSet,
// UndoSet and CleanupSet are answered on the reader, in the order they
// came, and Responses are written whole, one at a time.
//
// All the PDUs of one transaction (the master passes one SNMP request on as
// several) are answered from one view. With NewWithSource, a new
// transaction whose GetNext or GetBulk goes on from where a response of the
// session ended is answered from that response's moment (asn1tree.Walks has
// the rule and its bounds), so a table read over many requests shows one
// moment; DataAge tells how old the answers' data was.
//
// A Subagent keeps its session alive until its context ends: when the master
// goes away it dials again with bounded backoff, re-opens, re-registers
// everything and re-adds its agent capabilities. A session it gives up after
// Open (a refused Register, say) is closed with a reason before the
// connection is dropped.
package agentx
