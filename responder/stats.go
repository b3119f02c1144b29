package responder

import (
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

// Stats are the responder's counters, named after the SNMPv2-MIB snmp
// group where one exists. They are safe to read while the responder runs.
type Stats struct {
	InPkts              atomic.Uint64 // datagrams received
	InBadVersions       atomic.Uint64 // SNMP version other than 1 and 2c
	InBadCommunityNames atomic.Uint64 // wrong community: dropped
	InASNParseErrs      atomic.Uint64 // malformed: dropped
	InNotRequests       atomic.Uint64 // Response, Trap, Inform, Report: dropped
	InGetRequests       atomic.Uint64
	InGetNexts          atomic.Uint64
	InGetBulks          atomic.Uint64
	InSetRequests       atomic.Uint64
	OutGetResponses     atomic.Uint64 // responses built
	OutTooBigs          atomic.Uint64
	OutNoSuchNames      atomic.Uint64
	OutNotWritables     atomic.Uint64
	OutGenErrs          atomic.Uint64
	SilentDrops         atomic.Uint64 // even a tooBig response would not fit
	SendErrors          atomic.Uint64 // the socket refused a response

	// SNMPv3 (RFC 3412 snmpMPDStats, RFC 3414 usmStats, RFC 3413).
	UnknownSecurityModels  atomic.Uint64
	InvalidMsgs            atomic.Uint64
	UnknownPDUHandlers     atomic.Uint64
	UnknownContexts        atomic.Uint64
	UnsupportedSecLevels   atomic.Uint64
	NotInTimeWindows       atomic.Uint64
	UnknownUserNames       atomic.Uint64
	UnknownEngineIDs       atomic.Uint64
	WrongDigests           atomic.Uint64
	DecryptionErrors       atomic.Uint64
	OutReports             atomic.Uint64 // Reports sent for the counters above
	OutAuthorizationErrors atomic.Uint64 // below a user's minimum level
	// Throttled are SNMPv3 messages not answered for their source's
	// failure limits (Config.AuthFailures, Config.Discoveries): failures
	// over them (counted in usmStats too), and requests of a source that
	// has spent them.
	Throttled atomic.Uint64
	// DataAge is how old the data of the answers was, for views that
	// tell (asn1tree.DataTimer).
	DataAge asn1tree.DataAges
	walks   *asn1tree.Walks[netip.AddrPort] // for WalkFallbacks; set by New
}

// Counts is a copy of Stats at one moment.
type Counts struct {
	InPkts, InBadVersions, InBadCommunityNames, InASNParseErrs, InNotRequests uint64
	InGetRequests, InGetNexts, InGetBulks, InSetRequests                      uint64
	OutGetResponses, OutTooBigs, OutNoSuchNames, OutNotWritables, OutGenErrs  uint64
	SilentDrops, SendErrors                                                   uint64
	UnknownSecurityModels, InvalidMsgs, UnknownPDUHandlers, UnknownContexts   uint64
	UnsupportedSecLevels, NotInTimeWindows, UnknownUserNames                  uint64
	UnknownEngineIDs, WrongDigests, DecryptionErrors                          uint64
	OutReports, OutAuthorizationErrors, Throttled                             uint64
	// WalkFallbacks are the walks that fell back to the current moment
	// for the walks' memory budget (Config.WalkBudget).
	WalkFallbacks uint64
	// The age of the last answer's data, and the largest of the last 30
	// to 60 seconds.
	DataAge, MaxDataAge time.Duration
}

// Snapshot copies the counters (each read atomically, not all at once).
func (s *Stats) Snapshot() Counts {
	age, maxAge := s.DataAge.Get(time.Now())
	var fell uint64
	if s.walks != nil {
		fell = s.walks.FellBack()
	}
	return Counts{
		DataAge: age, MaxDataAge: maxAge, WalkFallbacks: fell,
		InPkts: s.InPkts.Load(), InBadVersions: s.InBadVersions.Load(),
		InBadCommunityNames: s.InBadCommunityNames.Load(), InASNParseErrs: s.InASNParseErrs.Load(),
		InNotRequests: s.InNotRequests.Load(), InGetRequests: s.InGetRequests.Load(),
		InGetNexts: s.InGetNexts.Load(), InGetBulks: s.InGetBulks.Load(),
		InSetRequests: s.InSetRequests.Load(), OutGetResponses: s.OutGetResponses.Load(),
		OutTooBigs: s.OutTooBigs.Load(), OutNoSuchNames: s.OutNoSuchNames.Load(),
		OutNotWritables: s.OutNotWritables.Load(), OutGenErrs: s.OutGenErrs.Load(),
		SilentDrops: s.SilentDrops.Load(), SendErrors: s.SendErrors.Load(),
		UnknownSecurityModels: s.UnknownSecurityModels.Load(), InvalidMsgs: s.InvalidMsgs.Load(),
		UnknownPDUHandlers: s.UnknownPDUHandlers.Load(), UnknownContexts: s.UnknownContexts.Load(),
		UnsupportedSecLevels: s.UnsupportedSecLevels.Load(), NotInTimeWindows: s.NotInTimeWindows.Load(),
		UnknownUserNames: s.UnknownUserNames.Load(), UnknownEngineIDs: s.UnknownEngineIDs.Load(),
		WrongDigests: s.WrongDigests.Load(), DecryptionErrors: s.DecryptionErrors.Load(),
		OutReports: s.OutReports.Load(), OutAuthorizationErrors: s.OutAuthorizationErrors.Load(),
		Throttled: s.Throttled.Load(),
	}
}
