// Package control is the daemon's local control socket: `subagent peek` and
// `subagent get` ask the running daemon through it, so they show everything
// it serves. The protocol is one JSON object per line in each direction;
// its messages are client/spmiwire's, which the Go consumer shares.
package control

import (
	"errors"

	"github.com/perfagent/subagent/spmi"
)

func asSpmiError(err error) *spmi.Error {
	var se *spmi.Error
	if errors.As(err, &se) {
		return se
	}
	return &spmi.Error{Code: spmi.SiOtherErr, Msg: err.Error()}
}

var errBadOp = func(op string) error {
	return spmi.Errorf(spmi.SiBadArgument, "unknown control operation %q (peek, get, status, create, delete, hotset.create, hotset.add, hotset.del, hotset.get, hotset.free, statset.create, statset.add, statset.get, statset.free)", op)
}
