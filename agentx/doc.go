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
// transport after one slow answer, so requests are answered straight from an
// in-memory view on the socket reader and never wait on anything else.
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
