package control

import (
	"time"

	"github.com/perfagent/subagent/internal/unixsock"
)

// WithoutOwners makes srv count no user as an owner, so that a test run
// as root (or as the daemon's user) is budgeted and queued as a reader is.
func WithoutOwners(srv *Server) *Server {
	srv.owners = &unixsock.Allow{}
	return srv
}

// WithClock makes srv's log of failed changes read now.
func WithClock(srv *Server, now func() time.Time) *Server {
	srv.now = now
	return srv
}
