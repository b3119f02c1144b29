// Package hotset is the SPMI guide's hotset: one statistic watched across
// all peer instances of a context (every disk's busy, every process's
// CPU), reporting the top or bottom few, optionally only those beyond a
// threshold, as feeds (a table in the tree), exceptions (log records and a
// bounded table) and SNMP notifications limited to one per frequency per
// peer set and, across its peer sets, by a token bucket per hotset.
//
// The engine evaluates over a published spmi.Snapshot, so one refresh
// feeds every hotset and every peer set at once; its Provider serves the
// last results and never evaluates inside Collect, since it is itself part
// of the snapshot it reads.
package hotset

import (
	"regexp"
	"strings"
	"time"

	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
)

// Feed is the guide's HotFeed: when items are returned in the feed table.
type Feed uint8

const (
	FeedNone      Feed = iota // SiHotNoFeed
	FeedThreshold             // SiHotThreshold: those beyond the threshold
	FeedAlways                // SiHotAlways: all, threshold ignored
)

// Excp is the guide's HotExcept: what a crossing generates.
type Excp uint8

const (
	ExcpNone      Excp = iota // SiHotNoException
	ExcpException             // SiHotException: a log record and a table row
	ExcpTrap                  // SiHotTrap: an SNMP notification
	ExcpBoth                  // SiHotBoth
)

var (
	feedNames = []string{"none", "threshold", "always"}
	excpNames = []string{"none", "exception", "trap", "both"}
)

func (f Feed) String() string { return feedNames[min(int(f), len(feedNames)-1)] }
func (e Excp) String() string { return excpNames[min(int(e), len(excpNames)-1)] }

// ParseFeed reads a feed_type as the configuration writes it ("" is none).
func ParseFeed(s string) (Feed, bool) {
	if s == "" {
		return FeedNone, true
	}
	for i, n := range feedNames {
		if s == n {
			return Feed(i), true
		}
	}
	return 0, false
}

// ParseExcp reads an excp_type as the configuration writes it ("" is none).
func ParseExcp(s string) (Excp, bool) {
	if s == "" {
		return ExcpNone, true
	}
	for i, n := range excpNames {
		if s == n {
			return Excp(i), true
		}
	}
	return 0, false
}

// Exceptions tells whether e generates exceptions.
func (e Excp) Exceptions() bool { return e == ExcpException || e == ExcpBoth }

// Traps tells whether e generates SNMP notifications.
func (e Excp) Traps() bool { return e == ExcpTrap || e == ExcpBoth }

// MinFrequency is the guide's shortest time between two exceptions or
// traps of one peer set.
const MinFrequency = 5 * time.Minute

// Def is one hotset as the guide's SpmiAddSetHot takes it, named.
type Def struct {
	Name        string
	GrandParent string // path of the context whose subtree holds the peers ("Disk", "RTime/ARM")
	Stat        string // the statistic's name in each peer ("busy")
	MaxResp     int    // most items per peer set; 0 means all (feeds only)
	Threshold   int    // rate per second for counters, level for quantities; negative: below |threshold|
	Frequency   time.Duration
	Feed        Feed
	Excp        Excp
	Severity    int
	TrapNo      int
	// Rearm is the falling threshold (RMON's alarmFallingThreshold), in
	// the threshold's units and with its sign; 0: none, and events follow
	// the guide's model (one per frequency while beyond). With it, a peer
	// that raised an event raises the next only after its value went back
	// past Rearm (not beyond it) and crossed Threshold again.
	Rearm int
	// Cleared asks for a cleared event when a peer that raised one goes
	// back past Rearm (which it needs).
	Cleared bool
	// Limit bounds the hotset's reports across all its peer sets (zero
	// fields: the engine's default).
	Limit Limit
}

// Path is the statistic path with its wildcard, as configured.
func (d *Def) Path() string { return d.GrandParent + "/*/" + d.Stat }

var nameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,30}$`)

// ParsePath splits "Disk/*/busy" into the grandparent and the statistic.
// The wildcard stands for the peers (and, for grandparents with several
// levels of instances, the levels above them).
func ParsePath(p string) (grandparent, stat string, err error) {
	parts := strings.Split(spmiwire.CleanPath(p), "/")
	n := len(parts)
	if n < 3 || parts[n-2] != "*" {
		return "", "", spmierr.Errorf(spmierr.SiBadArgument, "stat %q is not a path like Disk/*/busy (the grandparent context, *, the statistic)", p)
	}
	for i, c := range parts {
		if c == "" || (c == "*") != (i == n-2) || (i != n-2 && strings.Contains(c, "*")) {
			return "", "", spmierr.Errorf(spmierr.SiBadArgument, "stat %q: only the part before the statistic may be *, and no part may be empty", p)
		}
	}
	return strings.Join(parts[:n-2], "/"), parts[n-1], nil
}

// Validate applies the guide's rules for SpmiAddSetHot; the error names
// the hotset and the field, with the SPMI code SiBadArgument.
func (d *Def) Validate() error {
	bad := func(field, format string, args ...any) error {
		return spmierr.Errorf(spmierr.SiBadArgument, "hotset %q: %s: "+format, append([]any{d.Name, field}, args...)...)
	}
	switch {
	case !nameRE.MatchString(d.Name):
		return bad("name", "%q is not 1 to 31 letters, digits, _ or - starting with a letter", d.Name)
	case d.GrandParent == "" || d.Stat == "":
		return bad("stat", "grandparent and statistic must be given")
	case d.Feed > FeedAlways:
		return bad("feed_type", "%d is not none, threshold or always", d.Feed)
	case d.Excp > ExcpBoth:
		return bad("excp_type", "%d is not none, exception, trap or both", d.Excp)
	case d.MaxResp < 0 || d.MaxResp > 32767:
		return bad("maxresp", "%d is not from 0 to 32767", d.MaxResp)
	case d.Severity < 0 || d.Severity > 32767:
		return bad("severity", "%d is not from 0 to 32767", d.Severity)
	case d.TrapNo < 0 || d.TrapNo > 32767:
		return bad("trap_no", "%d is not from 0 to 32767", d.TrapNo)
	case d.Feed == FeedNone && d.Excp == ExcpNone:
		return bad("feed_type", "none with excp_type none: the hotset would report nothing")
	case d.Limit.Burst < 0 || d.Limit.Burst > MaxBurst:
		return bad("notify_burst", "%d is not from 1 to %d (0: the default)", d.Limit.Burst, MaxBurst)
	case d.Limit.Every != 0 && (d.Limit.Every < MinEvery || d.Limit.Every > MaxEvery):
		return bad("notify_interval", "%v is not from %v to %v (0: the default)", d.Limit.Every, MinEvery, MaxEvery)
	}
	if d.Excp == ExcpNone {
		if d.Rearm != 0 || d.Cleared {
			return bad("rearm", "needs excp_type exception, trap or both")
		}
		return nil
	}
	switch {
	case d.Rearm != 0 && d.Threshold > 0 && (d.Rearm < 0 || d.Rearm > d.Threshold):
		return bad("rearm", "%d is not from 1 to the threshold %d: values re-arm when they fall to it", d.Rearm, d.Threshold)
	case d.Rearm != 0 && d.Threshold < 0 && d.Rearm > d.Threshold:
		return bad("rearm", "%d is not negative and at most the threshold %d: values re-arm when they rise to its absolute value", d.Rearm, d.Threshold)
	case d.Cleared && d.Rearm == 0:
		return bad("cleared", "needs a rearm (falling) threshold")
	case d.MaxResp == 0:
		return bad("maxresp", "must be non-zero when excp_type is %s", d.Excp)
	case d.Threshold == 0:
		return bad("threshold", "must be non-zero when excp_type is %s", d.Excp)
	case d.Frequency < MinFrequency:
		return bad("frequency", "%v is below the guide's minimum of %v between exceptions", d.Frequency, MinFrequency)
	case d.Excp.Exceptions() && d.Severity <= 0:
		return bad("severity", "must be positive when excp_type is %s", d.Excp)
	case d.Excp.Traps() && d.TrapNo <= 0:
		return bad("trap_no", "must be positive when excp_type is %s", d.Excp)
	}
	return nil
}
