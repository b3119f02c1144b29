package spmi

import "github.com/perfagent/subagent/client/spmierr"

// The SPMI error type and codes live in the client module
// (client/spmierr), which the supplier libraries import without the
// daemon; these are the same type and values under their spmi names.

// Code is an SPMI error code from the guide's error code table
// (sys/Spmidef.h). The numbers are part of the DDS wire contract.
type Code = spmierr.Code

// The SPMI error codes.
const (
	SiSuccess      = spmierr.SiSuccess
	SiInvalidCx    = spmierr.SiInvalidCx
	SiNoShmPtr     = spmierr.SiNoShmPtr
	SiShmemFailed  = spmierr.SiShmemFailed
	SiAssumedDead  = spmierr.SiAssumedDead
	SiInstBusy     = spmierr.SiInstBusy
	SiNotInst      = spmierr.SiNotInst
	SiNotInit      = spmierr.SiNotInit
	SiBadArgument  = spmierr.SiBadArgument
	SiNotFound     = spmierr.SiNotFound
	SiNoValue      = spmierr.SiNoValue
	SiInitFailed   = spmierr.SiInitFailed
	SiSmuxFailed   = spmierr.SiSmuxFailed
	SiLocked       = spmierr.SiLocked
	SiDuplicate    = spmierr.SiDuplicate
	SiCallocFailed = spmierr.SiCallocFailed
	SiNoLicense    = spmierr.SiNoLicense
	SiDeleted      = spmierr.SiDeleted
	SiOtherErr     = spmierr.SiOtherErr
)

// Error is an SPMI error: the code from the table plus what was wrong.
type Error = spmierr.Error

// Errorf builds an *Error with the given code.
func Errorf(c Code, format string, args ...any) error {
	return spmierr.Errorf(c, format, args...)
}

// CodeOf returns the SPMI code of err: SiSuccess for nil, SiOtherErr for
// errors that carry none.
func CodeOf(err error) Code { return spmierr.CodeOf(err) }
