package control

import "github.com/perfagent/subagent/internal/unixsock"

// WithoutOwners makes srv count no user as an owner, so that a test run
// as root (or as the daemon's user) is budgeted and queued as a reader is.
func WithoutOwners(srv *Server) *Server {
	srv.owners = &unixsock.Allow{}
	return srv
}
