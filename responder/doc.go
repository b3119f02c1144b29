// Package responder is the embedded standalone SNMP agent: it answers
// read-only SNMPv1, SNMPv2c and SNMPv3 (USM) Get, GetNext and GetBulk
// requests over UDP from an asn1tree.View, so the daemon is useful on a
// machine without snmpd.
//
// SNMPv3 (Config.V3; RFC 3412 7.2, RFC 3414 3.2, RFC 3826, RFC 7860):
//
//   - Checks in RFC order, each failure counted: msgVersion
//     (snmpInBadVersions), BER and msgMaxSize < 484 (snmpInASNParseErrs),
//     security model (snmpUnknownSecurityModels), priv without auth
//     (snmpInvalidMsgs), then USM: engine ID, user, level, digest, time
//     window (150 s; boots must match), privacy parameters. The USM
//     failures answer a reportable message with a Report carrying the
//     usmStats counter, at noAuthNoPriv, except notInTimeWindow, signed
//     (authNoPriv) so that the manager can trust the time it learns.
//     Discovery is the unknownEngineIDs Report. A message that fails
//     authentication never gets a value.
//   - Failures are throttled per source address (usm.Throttle,
//     Config.AuthFailures and Config.Discoveries): past its limits a
//     failure is counted but not answered, and a source that has spent
//     its failures gets no answer to authenticated requests either, so a
//     password guesser cannot tell a right guess (Stats.Throttled).
//   - contextEngineID empty or this engine's, contextName "" only; other
//     values are dropped and counted (snmpUnknownPDUHandlers,
//     snmpUnknownContexts).
//   - A request below the user's minimum level gets authorizationError; a
//     user sees only its subtrees (filterView).
//   - Responses go at the request's level with this engine's boots and
//     time and a fresh AES salt (a counter, random at start).
//   - The keys come localized (package usm, through gosnmp's
//     InitSecurityKeys); the message processing is written here, because
//     gosnmp has no agent side: its v3 decoder checks no time window,
//     keeps no counters and re-localizes to whatever engine ID a packet
//     names, and its HMAC and cipher helpers are not exported.
//     crypto/cipher's CFB is deprecated, so CFB-128 is written out (cfb).
//   - With System set, the snmp group, snmpEngine, snmpMPDStats,
//     usmStats and the SNMP-TARGET-MIB context counters are served
//     (mgmt.go).
//
// Behaviour (RFC 3416, RFC 3584):
//
//   - Get answers the value, or in v2c noSuchInstance when some entry lies
//     under the requested OID minus its last arc and noSuchObject otherwise
//     (the tree does not know object boundaries, so this is a heuristic that
//     is right for scalars, name.0); in v1 noSuchName with its error-index.
//   - GetNext answers the next entry, or endOfMibView (v2c) / noSuchName (v1).
//   - SNMPv1 never sees Counter64 (RFC 3584 4.2.2.1): Get answers noSuchName,
//     GetNext steps over them.
//   - With Config.System, the SNMPv2-MIB system group (RFC 3418: sysDescr
//     to sysServices, sysORLastChange and one sysORTable entry) is served
//     in front of the tree, merged in OID order, for managers' discovery;
//     sysUpTime counts from New. Under AgentX the master serves its own.
//   - GetBulk follows RFC 3416 4.2.3 as package snmpreq has it for both
//     front ends: negative non-repeaters and max-repetitions count as zero;
//     a response holds at most Config.MaxRepetitions varbinds, but always
//     one whole repetition; it stops after a repetition that is all
//     endOfMibView; varbinds that would exceed the message size are cut
//     off after the last that fits. Only when the non-repeaters (or the
//     first varbind) do not fit is the answer tooBig.
//   - A Get, GetNext or Set response bigger than the size limit becomes
//     tooBig with error-index 0 and no varbinds; if even that does not fit,
//     the request is dropped and counted in SilentDrops.
//   - Set is refused: v2c notWritable (RFC 3416 allows noAccess or
//     notWritable for a read-only agent; notWritable says why), v1 noSuchName,
//     both with error-index 1 and the request's varbinds echoed.
//   - A wrong community, a version other than 1 or 2c, a malformed packet
//     (including a varbind value outside the SNMP syntaxes, since error
//     responses echo values) or a PDU that is not a request is dropped
//     silently and counted in Stats.
//
// One goroutine reads, answers and writes, with one reused buffer; the view
// source is called once per request. With NewWithSource, a GetNext or
// GetBulk that goes on from where a response to the same manager (UDP
// address and port) ended is answered from that response's moment
// (asn1tree.Walks has the rule and its bounds), so a table read over many
// requests shows one moment; Stats.DataAge tells how old the answers'
// data was.
//
// The PDU vocabulary (tags, PDU types, error statuses) is gosnmp's. The BER
// encoding and decoding of messages is done here, because gosnmp v1.47.0's
// codec is client-side and gets agent-side details wrong:
//
//   - SnmpPacket.NonRepeaters is a uint8 and the decoder casts into it, so
//     non-repeaters 256 reads as 0 and -1 as 255; max-repetitions -1 is
//     masked to 2147483647. RFC 3416 wants both clamped at zero.
//   - RequestID is a uint32 re-encoded as a positive int, so a negative
//     request-id comes back as a different number and the manager drops it.
//   - ErrorIndex is a uint8: v1 error-index 256 and above cannot be sent.
//   - The community's length is written as one octet, which is wrong BER
//     from 128 bytes on.
//   - It computes no sizes, which tooBig and GetBulk truncation need per
//     varbind; error responses must echo the request's varbinds as received.
//   - Each request costs 33 allocations to decode and each varbind about 7
//     to encode (measured); this codec allocates nothing per request.
//
// The tests use gosnmp as the independent reference: requests are built with
// it, and every response is decoded with it.
package responder
