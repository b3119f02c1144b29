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
	maxLine    = 64 << 20
)

// SocketPath is the control socket of a run directory.
func SocketPath(runDir string) string { return filepath.Join(runDir, SocketName) }

// Request is one call.
type Request struct {
	Op    string   `json:"op"` // "peek", "get", "status"; "create", "delete" (admins)
	Path  string   `json:"path,omitempty"`
	Paths []string `json:"paths,omitempty"`
	// After asks get for values taken after this time (the time of the
	// caller's previous sample), so that a statset read sees a new snapshot.
	After time.Time `json:"after,omitzero"`
}

// Response answers one Request.
type Response struct {
	Err    *spmi.Error  `json:"err,omitempty"`
	Peek   []Entry      `json:"peek,omitempty"`
	Sample *spmi.Sample `json:"sample,omitempty"`
	Status *Status      `json:"status,omitempty"`
}

// Status describes the daemon.
type Status struct {
	PID      int    `json:"pid"`
	Base     string `json:"base"`
	NumStats int    `json:"num_stats"`
	Version  string `json:"version"`
}

// Entry is one line of peek output: a context or a statistic.
type Entry struct {
	Path  string `json:"path"`
	Descr string `json:"descr"`
	Rel   string `json:"rel"`
	OID   string `json:"oid"`
	Inst  string `json:"inst,omitempty"` // instantiability of contexts
	// Instance marks a context created by instantiation (cpu0, sda, a PID).
	Instance bool `json:"instance,omitempty"`
	// Named: the instances keep their names and numbers (spmi.CxDesc.Named).
	Named bool `json:"named,omitempty"`
	// Rows: its subcontexts are rows of a table (spmi.Node.HasRows), whose
	// rows are called RowName where the path does not name them.
	Rows    bool           `json:"rows,omitempty"`
	Cell    string         `json:"cell,omitempty"` // the statistic's OID in the table view
	RowName string         `json:"row_name,omitempty"`
	Stat    *spmi.StatDesc `json:"stat,omitempty"`
}

// Peek lists the node at path and everything below it (all of the
// hierarchy for an empty path) in ASN order.
func Peek(s *spmi.Snapshot, path string) ([]Entry, error) {
	start := s.Top
	if path != "" && path != "/" {
		n, err := s.Lookup(path)
		if err != nil {
			return nil, err
		}
		start = n
	}
	var out []Entry
	spmi.Walk(start, func(n *spmi.Node) bool {
		if n == s.Top {
			return true
		}
		e := Entry{Path: n.Path, Descr: n.Descr, Rel: n.Rel.String(), OID: n.FullOID(s.Base).String(), Stat: n.Stat, Instance: n.Instance, Named: n.Named(), Rows: n.HasRows(), RowName: n.RowName()}
		if n.Cell != nil {
			e.Cell = n.Cell.String()
		}
		if !n.IsStat() {
			e.Inst = n.Inst().String()
		}
		out = append(out, e)
		return true
	})
	return out, nil
}

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
	return spmi.Errorf(spmi.SiBadArgument, "unknown control operation %q (peek, get, status)", op)
}
