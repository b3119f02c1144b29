// Package control is the daemon's local control socket: `subagent peek` and
// `subagent get` ask the running daemon through it, so they show everything
// it serves. The protocol is one JSON object per line in each direction;
// its messages are client/spmiwire's, which the Go consumer shares.
package control

import (
	"errors"

	"github.com/perfagent/subagent/client/spmierr"
)

func asSpmiError(err error) *spmierr.Error {
	var se *spmierr.Error
	if errors.As(err, &se) {
		return se
	}
	return &spmierr.Error{Code: spmierr.SiOtherErr, Msg: err.Error()}
}

var errBadOp = func(op string) error {
	return spmierr.Errorf(spmierr.SiBadArgument, "unknown control operation %q (peek, get, status, create, delete, expr.list, expr.create, expr.delete, slo.list, slo.create, slo.delete, hotset.create, hotset.add, hotset.del, hotset.get, hotset.free, statset.create, statset.add, statset.get, statset.free)", op)
}
