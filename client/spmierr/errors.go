// Package spmierr is the SPMI error type and the guide's error codes
// (sys/Spmidef.h), as the DDS protocol carries them and the client
// libraries return them. The daemon uses them as they are (no second
// name), so an error is the same value on both sides of the socket.
package spmierr

import "fmt"

// Code is an SPMI error code from the guide's error code table
// (sys/Spmidef.h). The numbers are part of the DDS wire contract.
type Code int

// The SPMI error codes.
const (
	SiSuccess      Code = 0
	SiInvalidCx    Code = 180
	SiNoShmPtr     Code = 181
	SiShmemFailed  Code = 182
	SiAssumedDead  Code = 183
	SiInstBusy     Code = 184
	SiNotInst      Code = 185
	SiNotInit      Code = 186
	SiBadArgument  Code = 187
	SiNotFound     Code = 188
	SiNoValue      Code = 189
	SiInitFailed   Code = 190
	SiSmuxFailed   Code = 191
	SiLocked       Code = 192
	SiDuplicate    Code = 193
	SiCallocFailed Code = 194
	SiNoLicense    Code = 195
	SiDeleted      Code = 196
	SiOtherErr     Code = 197
)

var codeNames = map[Code]string{
	SiSuccess: "SiSuccess", SiInvalidCx: "SiInvalidCx", SiNoShmPtr: "SiNoShmPtr",
	SiShmemFailed: "SiShmemFailed", SiAssumedDead: "SiAssumedDead", SiInstBusy: "SiInstBusy",
	SiNotInst: "SiNotInst", SiNotInit: "SiNotInit", SiBadArgument: "SiBadArgument",
	SiNotFound: "SiNotFound", SiNoValue: "SiNoValue", SiInitFailed: "SiInitFailed",
	SiSmuxFailed: "SiSmuxFailed", SiLocked: "SiLocked", SiDuplicate: "SiDuplicate",
	SiCallocFailed: "SiCallocFailed", SiNoLicense: "SiNoLicense", SiDeleted: "SiDeleted",
	SiOtherErr: "SiOtherErr",
}

// Name is the symbolic name of the code, such as "SiDuplicate".
func (c Code) Name() string {
	if n, ok := codeNames[c]; ok {
		return n
	}
	return fmt.Sprintf("Si%d", int(c))
}

func (c Code) String() string { return fmt.Sprintf("%s (%d)", c.Name(), int(c)) }

// Error is an SPMI error: the code from the table plus what was wrong.
type Error struct {
	Code Code   `json:"code"`
	Msg  string `json:"msg"`
	// Err is the cause, when there is one on this side of the socket (a
	// failed connect under SiInitFailed): errors.Is sees through to it.
	Err error `json:"-"`
}

func (e *Error) Error() string { return e.Code.String() + ": " + e.Msg }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is lets errors.Is match on the code alone: errors.Is(err, &Error{Code: SiDuplicate}).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Errorf builds an *Error with the given code.
func Errorf(c Code, format string, args ...any) error {
	return &Error{Code: c, Msg: fmt.Sprintf(format, args...)}
}

// CodeOf returns the SPMI code of err: SiSuccess for nil, SiOtherErr for
// errors that carry none.
func CodeOf(err error) Code {
	if err == nil {
		return SiSuccess
	}
	for e := err; e != nil; {
		if se, ok := e.(*Error); ok {
			return se.Code
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			break
		}
		e = u.Unwrap()
	}
	return SiOtherErr
}
