// Package control is the daemon's local control socket: `subagent peek` and
// `subagent get` ask the running daemon through it, so they show everything
// it serves. The protocol is one JSON object per line in each direction.
package control

import (
	"errors"
	"path/filepath"
	"time"

	"github.com/perfagent/subagent/spmi"
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
	maxLine     = 64 << 20
)

// SocketPath is the control socket of a run directory.
func SocketPath(runDir string) string { return filepath.Join(runDir, SocketName) }

// Request is one call.
type Request struct {
	// "peek", "get", "status"; "create", "delete" (admins); the session's
	// hotsets: "hotset.create", "hotset.add", "hotset.del", "hotset.get",
	// "hotset.free"; its statsets: "statset.create", "statset.add" (Paths),
	// "statset.get" (After), "statset.free".
	Op    string   `json:"op"`
	Path  string   `json:"path,omitempty"`
	Paths []string `json:"paths,omitempty"`
	// After asks get for values taken after this time (the time of the
	// caller's previous sample), so that a statset read sees a new snapshot.
	After time.Time `json:"after,omitzero"`
	// ID names a hotset or statset of the session, Index a peer set.
	ID    int     `json:"id,omitempty"`
	Index int     `json:"index,omitempty"`
	Hot   *HotDef `json:"hot,omitempty"`
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
	Err    *spmi.Error  `json:"err,omitempty"`
	Peek   []Entry      `json:"peek,omitempty"`
	More   bool         `json:"more,omitempty"` // a peek page: entries remain after it
	Sample *spmi.Sample `json:"sample,omitempty"`
	Status *Status      `json:"status,omitempty"`
	ID     int          `json:"id,omitempty"` // of a set created, a peer set added, a statset's size
	Hot    *HotResult   `json:"hot,omitempty"`
}

// Status describes the daemon.
type Status struct {
	PID      int    `json:"pid"`
	Base     string `json:"base"`
	NumStats int    `json:"num_stats"`
	Version  string `json:"version"`
}

// Entry is one line of peek output (spmi.Entry).
type Entry = spmi.Entry

// Peek lists the node at path and everything below it (spmi.Peek).
func Peek(s *spmi.Snapshot, path string) ([]Entry, error) { return spmi.Peek(s, path) }

func asSpmiError(err error) *spmi.Error {
	var se *spmi.Error
	if errors.As(err, &se) {
		return se
	}
	return &spmi.Error{Code: spmi.SiOtherErr, Msg: err.Error()}
}

func errorFromResponse(r *Response) error {
	if r.Err != nil {
		return r.Err
	}
	return nil
}

var errBadOp = func(op string) error {
	return spmi.Errorf(spmi.SiBadArgument, "unknown control operation %q (peek, get, status, create, delete, hotset.create, hotset.add, hotset.del, hotset.get, hotset.free)", op)
}
