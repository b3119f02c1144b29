package spmi

import (
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
)

// The data that crosses the control socket is defined once, in the client
// module (client/spmiwire), which the Go consumer imports without the
// daemon; these are the same types and values under their spmi names.

// Limits of names and descriptions, from the guide's SI_MAXNAME and
// SI_MAXLNAME (which include the terminating NUL).
const (
	MaxName  = spmiwire.MaxName
	MaxDescr = spmiwire.MaxDescr
)

type (
	Value    = spmiwire.Value
	ValType  = ddswire.ValType
	DataType = spmiwire.DataType
	Form     = spmiwire.Form
	InstFreq = ddswire.InstFreq
	StatDesc = spmiwire.StatDesc
	Entry    = spmiwire.Entry
	Sample   = spmiwire.Sample
	Item     = spmiwire.Item
)

const (
	SiCounter  = ddswire.SiCounter
	SiQuantity = ddswire.SiQuantity
	SiLong     = spmiwire.SiLong
	SiFloat    = spmiwire.SiFloat
	SiText     = spmiwire.SiText
	FormNumber = spmiwire.FormNumber
	FormBool   = spmiwire.FormBool
	FormTime   = spmiwire.FormTime
	SiNoInst   = ddswire.SiNoInst
	SiCfgInst  = ddswire.SiCfgInst
	SiContInst = ddswire.SiContInst
)

// NoValue is the value of a statistic whose source failed.
var NoValue = spmiwire.NoValue

// The constructors of values (spmiwire's), small enough to inline.
func Uint(v uint64) Value         { return spmiwire.Uint(v) }
func Int(v int64) Value           { return spmiwire.Int(v) }
func Float(v float64) Value       { return spmiwire.Float(v) }
func Text(s string) Value         { return spmiwire.Text(s) }
func Unmeasured(why string) Value { return spmiwire.Unmeasured(why) }

// CheckName checks a statistic's or a context's (kind) name and
// description against the guide's limits.
func CheckName(kind, name, descr string) error { return spmiwire.CheckName(kind, name, descr) }
