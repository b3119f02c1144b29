package dds

import (
	"io"
	"net"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/perfagent/subagent/client/ddswire"
)

// The formats a supplier library shares with the daemon live in the
// client module (client/ddswire), which suppliers import without the
// daemon. These are the same types, constants and functions under their
// dds names.

type (
	AddCx    = ddswire.AddCx
	Class    = ddswire.Class
	Cx       = ddswire.Cx
	DataType = ddswire.DataType
	DelCx    = ddswire.DelCx
	Exit     = ddswire.Exit
	Expect   = ddswire.Expect
	Field    = ddswire.Field
	Header   = ddswire.Header
	Init     = ddswire.Init
	InstFreq = ddswire.InstFreq
	Layout   = ddswire.Layout
	Limits   = ddswire.Limits
	Message  = ddswire.Message
	MsgType  = ddswire.MsgType
	Reply    = ddswire.Reply
	Stat     = ddswire.Stat
	ValType  = ddswire.ValType
	Vendor   = ddswire.Vendor
)

// The guide's enums.
const (
	SiCounter  = ddswire.SiCounter
	SiQuantity = ddswire.SiQuantity

	SiULong   = ddswire.SiULong
	SiLong    = ddswire.SiLong
	SiUInt    = ddswire.SiUInt
	SiInt     = ddswire.SiInt
	SiUShort  = ddswire.SiUShort
	SiShort   = ddswire.SiShort
	SiChar    = ddswire.SiChar
	SiAddr    = ddswire.SiAddr
	SiTimeval = ddswire.SiTimeval
	SiFloat   = ddswire.SiFloat
	SiDouble  = ddswire.SiDouble
	SiPtr     = ddswire.SiPtr
	SiUnsign  = ddswire.SiUnsign

	SiNoInst   = ddswire.SiNoInst
	SiCfgInst  = ddswire.SiCfgInst
	SiContInst = ddswire.SiContInst

	ClassUnsigned = ddswire.ClassUnsigned
	ClassSigned   = ddswire.ClassSigned
	ClassFloat    = ddswire.ClassFloat
	ClassTimeval  = ddswire.ClassTimeval
)

// Limits of the formats, and the protocol.
const (
	MaxName    = ddswire.MaxName
	MaxDescr   = ddswire.MaxDescr
	MaxPath    = ddswire.MaxPath
	MaxFile    = ddswire.MaxFile
	MaxErrmsg  = ddswire.MaxErrmsg
	MaxHeader  = ddswire.MaxHeader
	ProtoMajor = ddswire.ProtoMajor
	Root       = ddswire.Root

	MsgInit     = ddswire.MsgInit
	MsgAddCx    = ddswire.MsgAddCx
	MsgDelCx    = ddswire.MsgDelCx
	MsgExit     = ddswire.MsgExit
	AddCxReplay = ddswire.AddCxReplay
)

// The shared file's header (SpmiShare).
const (
	OffMagic    = ddswire.OffMagic
	OffMajor    = ddswire.OffMajor
	OffMinor    = ddswire.OffMinor
	OffHdrLen   = ddswire.OffHdrLen
	OffAllocLen = ddswire.OffAllocLen
	OffAreaOff  = ddswire.OffAreaOff
	OffAreaLen  = ddswire.OffAreaLen
	OffPermLen  = ddswire.OffPermLen
	OffGen      = ddswire.OffGen
	OffPID      = ddswire.OffPID
	OffFlags    = ddswire.OffFlags
	OffStart    = ddswire.OffStart
	OffArea     = ddswire.OffArea
	OffT        = ddswire.OffT
	OffGoAway   = ddswire.OffGoAway
	OffInterval = ddswire.OffInterval
	OffSubscrib = ddswire.OffSubscrib
	OffPortNo   = ddswire.OffPortNo
	OffPad      = ddswire.OffPad
	OffName     = ddswire.OffName
	OffBatch    = ddswire.OffBatch
	OffBatchEnd = ddswire.OffBatchEnd
	OffReading  = ddswire.OffReading
	OffPad2     = ddswire.OffPad2
	OffRes      = ddswire.OffRes
	HeaderSize  = ddswire.HeaderSize

	LenT    = ddswire.LenT
	LenName = ddswire.LenName
	NumRes  = ddswire.NumRes

	Magic     = ddswire.Magic
	FileMajor = ddswire.FileMajor
	FileMinor = ddswire.FileMinor
)

// DefaultLimits are used for every zero field of a Limits.
var DefaultLimits = ddswire.DefaultLimits

// Ceilings are the largest limits the formats can carry.
func Ceilings() Limits { return ddswire.Ceilings() }

// Messages and frames; each function is its ddswire namesake.

func Marshal(m Message, lim Limits) ([]byte, error) { return ddswire.Marshal(m, lim) }
func ReadFrame(r io.Reader, lim Limits) (MsgType, []byte, error) {
	return ddswire.ReadFrame(r, lim)
}
func ReadMessage(r io.Reader, lim Limits) (Message, error)  { return ddswire.ReadMessage(r, lim) }
func WriteMessage(w io.Writer, m Message, lim Limits) error { return ddswire.WriteMessage(w, m, lim) }
func Decode(t MsgType, body []byte, lim Limits) (Message, error) {
	return ddswire.Decode(t, body, lim)
}
func NewReply(to MsgType, value uint64, err error) *Reply { return ddswire.NewReply(to, value, err) }
func WriteMessageFD(c *net.UnixConn, m Message, fd int, lim Limits) error {
	return ddswire.WriteMessageFD(c, m, fd, lim)
}
func RecvMessage(c *net.UnixConn, lim Limits, timeout time.Duration) (Message, []int, error) {
	return ddswire.RecvMessage(c, lim, timeout)
}

// Checks of a registration and of a shared file.

func CheckInit(m *Init, lim Limits) (Vendor, error)        { return ddswire.CheckInit(m, lim) }
func CheckAddCx(m *AddCx, in *Init, v Vendor) (*Cx, error) { return ddswire.CheckAddCx(m, in, v) }
func CheckStat(s *Stat, areaLen uint32) error              { return ddswire.CheckStat(s, areaLen) }
func CheckName(kind, name string) error                    { return ddswire.CheckName(kind, name) }
func CheckDescr(kind, descr string) error                  { return ddswire.CheckDescr(kind, descr) }
func SplitPath(path string) ([]string, error)              { return ddswire.SplitPath(path) }
func SlotSize(t *Cx) uint32                                { return ddswire.SlotSize(t) }
func ExpectFor(m *Init, pid int32, start uint64) Expect    { return ddswire.ExpectFor(m, pid, start) }
func ValidateFile(b []byte, exp Expect, lim Limits) (Layout, error) {
	return ddswire.ValidateFile(b, exp, lim)
}

// The header (SpmiShare).

func NewHeader(areaLen, permLen uint32, pid int32, start uint64, file string) Header {
	return ddswire.NewHeader(areaLen, permLen, pid, start, file)
}
func DecodeHeader(b []byte) Header { return ddswire.DecodeHeader(b) }

// Faults: guard is deferred directly (defer guard(&err)), so the recover
// in ddswire.RecoverFault runs in the deferred call itself.
var (
	guard = ddswire.RecoverFault
	at    = ddswire.FieldPtr
)

// The header fields that change while a supplier runs (ddswire/live.go),
// the writer's hold-off and a process's start time.
type Stamp = ddswire.Stamp

var (
	LoadStamp     = ddswire.LoadStamp
	LoadGoAway    = ddswire.LoadGoAway
	SetGoAway     = ddswire.SetGoAway
	StoreInterval = ddswire.StoreInterval
	StoreSubscrib = ddswire.StoreSubscrib
	LoadGen       = ddswire.LoadGen
	StoreGen      = ddswire.StoreGen
	ProcStart     = ddswire.ProcStart
)

const WriterHoldOff = ddswire.WriterHoldOff

// load32 is one aligned atomic load of a header word.
func load32(mem []byte, off uint64) (v uint32, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer guard(&err)
	p, err := at(mem, off, 4)
	if err != nil {
		return 0, err
	}
	return atomic.LoadUint32((*uint32)(p)), nil
}
