package agentx

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrorCode is res.error of a Response PDU: an SNMP error-status (0-18) or
// an AgentX error (256-268, RFC 2741 section 6.2.16). It is an error value,
// so errors.Is(err, agentx.DuplicateRegistration) works on errors returned
// by this package.
type ErrorCode uint16

// SNMP error-status values a Response may carry (RFC 3416).
const (
	NoError             ErrorCode = 0
	TooBig              ErrorCode = 1
	NoSuchName          ErrorCode = 2
	BadValue            ErrorCode = 3
	ReadOnly            ErrorCode = 4
	GenErr              ErrorCode = 5
	NoAccess            ErrorCode = 6
	WrongType           ErrorCode = 7
	WrongLength         ErrorCode = 8
	WrongEncoding       ErrorCode = 9
	WrongValue          ErrorCode = 10
	NoCreation          ErrorCode = 11
	InconsistentValue   ErrorCode = 12
	ResourceUnavailable ErrorCode = 13
	CommitFailed        ErrorCode = 14
	UndoFailed          ErrorCode = 15
	AuthorizationError  ErrorCode = 16
	NotWritable         ErrorCode = 17
	InconsistentName    ErrorCode = 18
)

// AgentX error values.
const (
	OpenFailed            ErrorCode = 256
	NotOpen               ErrorCode = 257
	IndexWrongType        ErrorCode = 258
	IndexAlreadyAllocated ErrorCode = 259
	IndexNoneAvailable    ErrorCode = 260
	IndexNotAllocated     ErrorCode = 261
	UnsupportedContext    ErrorCode = 262
	DuplicateRegistration ErrorCode = 263
	UnknownRegistration   ErrorCode = 264
	UnknownAgentCaps      ErrorCode = 265
	ParseError            ErrorCode = 266
	RequestDenied         ErrorCode = 267
	ProcessingError       ErrorCode = 268
)

var snmpErrorNames = [...]string{"noError", "tooBig", "noSuchName", "badValue", "readOnly", "genErr",
	"noAccess", "wrongType", "wrongLength", "wrongEncoding", "wrongValue", "noCreation",
	"inconsistentValue", "resourceUnavailable", "commitFailed", "undoFailed", "authorizationError",
	"notWritable", "inconsistentName"}

var agentxErrorNames = [...]string{"openFailed", "notOpen", "indexWrongType", "indexAlreadyAllocated",
	"indexNoneAvailable", "indexNotAllocated", "unsupportedContext", "duplicateRegistration",
	"unknownRegistration", "unknownAgentCaps", "parseError", "requestDenied", "processingError"}

// String returns the RFC name of the code, such as "duplicateRegistration".
func (e ErrorCode) String() string {
	switch {
	case int(e) < len(snmpErrorNames):
		return snmpErrorNames[e]
	case e >= OpenFailed && int(e-OpenFailed) < len(agentxErrorNames):
		return agentxErrorNames[e-OpenFailed]
	}
	return "error(" + strconv.Itoa(int(e)) + ")"
}

func (e ErrorCode) Error() string {
	return "agentx: " + e.String() + " (" + strconv.Itoa(int(e)) + ")"
}

// ResponseError is a Response from the master whose res.error is not
// noError. It unwraps to its ErrorCode.
type ResponseError struct {
	Op    string // what was asked, e.g. "Register 1.3.6.1.4.1.32473.1"
	Code  ErrorCode
	Index uint16 // res.index: 1-based VarBind the error refers to, or 0
}

func (e *ResponseError) Error() string {
	s := fmt.Sprintf("agentx: master answered %s with %s (%d)", e.Op, e.Code.String(), uint16(e.Code))
	if e.Index != 0 {
		s += fmt.Sprintf(" at varbind %d", e.Index)
	}
	return s
}

func (e *ResponseError) Unwrap() error { return e.Code }

var (
	// ErrNotConnected is returned by Notify when no session was open
	// before its context ended.
	ErrNotConnected = errors.New("agentx: no session open with the master")
	// ErrSessionClosed is returned for a request whose session ended before
	// the master answered.
	ErrSessionClosed = errors.New("agentx: session closed")
	// ErrTimeout is returned when the master did not answer in time.
	ErrTimeout = errors.New("agentx: master did not answer in time")
)

// parseError is a malformed PDU body; the session answers it with
// ParseError when the header could be read.
type parseError struct{ msg string }

func (e *parseError) Error() string { return "agentx: malformed PDU: " + e.msg }

func errParse(format string, args ...any) error {
	return &parseError{msg: fmt.Sprintf(format, args...)}
}
