package spmiwire

import (
	"path/filepath"
	"time"

	"github.com/perfagent/subagent/client/spmierr"
)

// SocketName is the control socket's file name inside the run directory.
const SocketName = "subagent.sock"

// Line bounds: a request is small (a path or a list of paths), an answer
// may hold a large tree's peek.
const (
	MaxRequest = 64 << 10
	MaxPaths   = 1000
	// MaxPeekPage bounds a page of peek entries: about 300 bytes each, a
	// page stays under 1 MiB.
	MaxPeekPage = 2000
	// MaxLine bounds an answer's line.
	MaxLine = 64 << 20
)

// SocketPath is the control socket of a run directory.
func SocketPath(runDir string) string { return filepath.Join(runDir, SocketName) }

// Request is one call.
type Request struct {
	// "peek", "get", "status"; "create", "delete" (admins); the session's
	// hotsets: "hotset.create", "hotset.add", "hotset.del", "hotset.get",
	// "hotset.free"; its statsets: "statset.create", "statset.add" (Paths),
	// "statset.get" (After), "statset.free"; the daemon's derived
	// statistics and alarms: "expr.list", "expr.create" (Def), "expr.delete"
	// (Def's Kind and Name), the last two for admins; its service level
	// objectives: "slo.list", "slo.create" (Objective), "slo.delete"
	// (Objective's Name), the last two for admins.
	Op    string   `json:"op"`
	Path  string   `json:"path,omitempty"`
	Paths []string `json:"paths,omitempty"`
	// After asks get for values taken after this time (the time of the
	// caller's previous sample), so that a statset read sees a new snapshot.
	After time.Time `json:"after,omitzero"`
	// ID names a hotset or statset of the session, Index a peer set.
	ID    int      `json:"id,omitempty"`
	Index int      `json:"index,omitempty"`
	Hot   *HotDef  `json:"hot,omitempty"`
	Def   *ExprDef `json:"def,omitempty"`
	// Objective is slo.create's and slo.delete's.
	Objective *ObjectiveDef `json:"objective,omitempty"`
	// Peek in pages: Depth levels below Path (0: all), the entries after
	// the relative id From (the last of the previous page), at most Limit
	// (0: all, up to MaxPeekPage when Depth or From is set).
	Depth int    `json:"depth,omitempty"`
	From  string `json:"from,omitempty"`
	Limit int    `json:"limit,omitempty"`
	// Keep has statset.add take paths the daemon does not serve now
	// (a library replaying its statset after a restart): their values
	// carry the error.
	Keep bool `json:"keep,omitempty"`
}

// Response answers one Request.
type Response struct {
	Err    *spmierr.Error `json:"err,omitempty"`
	Peek   []Entry        `json:"peek,omitempty"`
	More   bool           `json:"more,omitempty"` // a peek page: entries remain after it
	Sample *Sample        `json:"sample,omitempty"`
	Status *Status        `json:"status,omitempty"`
	ID     int            `json:"id,omitempty"` // of a set created, a peer set added, a statset's size
	Hot    *HotResult     `json:"hot,omitempty"`
	Defs   []ExprDef      `json:"defs,omitempty"` // expr.list
	// Objectives answers slo.list.
	Objectives []ObjectiveDef `json:"objectives,omitempty"`
}

// ObjectiveDef is a service level objective of ARM transactions
// (docs/ARM.md, "Service levels"), with the configuration file's keys.
type ObjectiveDef struct {
	Name        string  `json:"name"`
	Application string  `json:"application"`         // pattern
	Transaction string  `json:"transaction"`         // pattern
	Threshold   int64   `json:"threshold,omitempty"` // microseconds; 0: availability
	Target      float64 `json:"target"`              // ratio, 0.999 for 99.9 %
	Window      int64   `json:"window"`              // seconds
	// Storage, in a list: as ExprDef's.
	Storage string `json:"storage,omitempty"`
}

// ExprDef is a derived statistic or an alarm (docs/EXPRESSIONS.md), with
// the configuration file's keys.
type ExprDef struct {
	Kind        string   `json:"kind"` // "derived" or "alarm"
	Name        string   `json:"name"`
	Expr        string   `json:"expr"`
	Description string   `json:"description,omitempty"` // derived
	Units       string   `json:"units,omitempty"`
	Scale       int      `json:"scale,omitempty"`
	Signed      bool     `json:"signed,omitempty"`
	Rising      *float64 `json:"rising,omitempty"` // alarm
	Falling     *float64 `json:"falling,omitempty"`
	For         int      `json:"for,omitempty"`
	Keep        int      `json:"keep,omitempty"`
	Severity    int      `json:"severity,omitempty"`
	Cleared     bool     `json:"cleared,omitempty"`
	Frequency   int      `json:"frequency,omitempty"` // seconds
	// TrapNo, when not 0, numbers the alarm's raise notification
	// (alarmTrapN, base.0.TrapNo) instead of alarmRaised.
	TrapNo int `json:"trap_no,omitempty"`
	// Storage, in a list: "readOnly" (the configuration file's),
	// "nonVolatile" (kept across restarts: created here or over SNMP) or
	// "volatile" (created over SNMP, lost at a restart).
	Storage string `json:"storage,omitempty"`
}

// Status describes the daemon.
type Status struct {
	PID      int    `json:"pid"`
	Base     string `json:"base"`
	NumStats int    `json:"num_stats"`
	Version  string `json:"version"`
}

// HotDef is one peer set to add to a hotset: SpmiAddSetHot's arguments.
type HotDef struct {
	Stat      string `json:"stat"` // "Disk/*/busy"
	MaxResp   int    `json:"maxresp,omitempty"`
	Threshold int    `json:"threshold,omitempty"`
	Frequency int    `json:"frequency,omitempty"` // minutes
	Feed      string `json:"feed_type,omitempty"` // none, threshold, always
	Excp      string `json:"excp_type,omitempty"` // none, exception, trap, both
	Severity  int    `json:"severity,omitempty"`
	TrapNo    int    `json:"trap_no,omitempty"`
	Rearm     int    `json:"rearm,omitempty"`   // falling threshold (hotset.Def.Rearm)
	Cleared   bool   `json:"cleared,omitempty"` // a cleared event when a peer re-arms
}

// HotResult answers a read of a hotset: one entry per peer set added, in
// the order added (the guide's SpmiHotVals).
type HotResult struct {
	Time     time.Time    `json:"time"`
	Elapsed  float64      `json:"elapsed"` // seconds since the previous read, 0 on the first
	PeerSets []HotPeerSet `json:"peer_sets"`
}

// HotPeerSet is one peer set's reading: its groups of peers (one per
// lowest-level parent), or the error that kept it from being read.
type HotPeerSet struct {
	Stat   string         `json:"stat"`
	Err    *spmierr.Error `json:"err,omitempty"`
	Groups []HotGroup     `json:"groups,omitempty"`
	Events int            `json:"events,omitempty"` // exceptions this read raised
	// Cleared lists the peers that re-armed at this read (with a
	// rearm threshold and cleared asked for), as "name=value".
	Cleared []string `json:"cleared,omitempty"`
	Def     HotDef   `json:"def"`
}

// HotGroup is the guide's SpmiHotVals for one parent of peers.
type HotGroup struct {
	Parent string       `json:"parent"` // "Disk/"
	Avail  int          `json:"avail"`  // values that qualify (avail_resp)
	Items  []HotItemOut `json:"items"`  // count = len(Items)
}

// HotItemOut is the guide's SpmiHotItems: a peer and its compared value
// (a rate per second for counters).
type HotItemOut struct {
	Name  string  `json:"name"`
	Path  string  `json:"path"`
	Value float64 `json:"value"` // compared: a counter's rate per second
	Units string  `json:"units,omitempty"`
	// Raw is the value as its source keeps it (a counter's count: the
	// guide's SpmiHotItems.val); NoRate marks a counter read for the
	// first time, whose Value is 0 until the next read.
	Raw    float64 `json:"raw"`
	NoRate bool    `json:"no_rate,omitempty"`
}

// Failure is the error the daemon answered, nil when none.
func (r *Response) Failure() error {
	if r.Err != nil {
		return r.Err
	}
	return nil
}
