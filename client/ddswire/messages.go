package ddswire

import (
	"fmt"

	"github.com/perfagent/subagent/client/spmierr"
)

// MsgType is a frame's message type. A reply's type is its request's with
// the high bit set.
type MsgType uint16

const (
	MsgInit  MsgType = 1
	MsgAddCx MsgType = 2
	MsgDelCx MsgType = 3
	MsgExit  MsgType = 4

	replyBit MsgType = 0x80
)

// ReplyTo is the type of the reply to a request of type t.
func (t MsgType) ReplyTo() MsgType { return t | replyBit }

// IsReply reports whether t is a reply type.
func (t MsgType) IsReply() bool { return t&replyBit != 0 }

// Request is the request type a reply answers.
func (t MsgType) Request() MsgType { return t &^ replyBit }

func (t MsgType) known() bool {
	r := t.Request()
	return r >= MsgInit && r <= MsgExit && t&^(replyBit|0x7) == 0
}

func (t MsgType) String() string {
	names := [...]string{MsgInit: "Init", MsgAddCx: "AddCx", MsgDelCx: "DelCx", MsgExit: "Exit"}
	if !t.known() {
		return fmt.Sprintf("MsgType(%#x)", uint16(t))
	}
	if t.IsReply() {
		return names[t.Request()] + "Reply"
	}
	return names[t]
}

// Message is one of *Init, *AddCx, *DelCx, *Exit, *Reply.
type Message interface {
	Type() MsgType
	encode(e *enc, lim Limits)
}

// Stat is one SpmiRawStat, without get_fun (never sent).
type Stat struct {
	Name     string
	Descr    string
	Min, Max int64
	ValType  ValType
	DataType DataType // presented format
	ASN      uint32
	Size     uint32   // source field size
	Offset   uint32   // source field offset in the context's data area
	Type     DataType // source field format
}

// Cx is one cx_create. DataSize is 0 for permanent contexts (they share the
// permanent part) and the slot size for volatile templates: a multiple of 8
// covering every statistic's field, computed by the client library.
type Cx struct {
	Path     string
	Descr    string
	ASN      uint32
	DataSize uint32
	InstFreq InstFreq
	Stats    []Stat
}

// Init registers a supplier: first message on a connection. The shared
// file's descriptor travels with it as SCM_RIGHTS.
type Init struct {
	Version    uint16 // protocol version; 0 is sent as ProtoMajor
	AreaLen    uint32 // data area bytes (the sixth SpmiDdsInit argument, rounded)
	PermLen    uint32 // permanent part at the start of the area
	Generation uint64 // SiShGen of the file, nonzero
	File       string // path given to SpmiDdsInit
	Contexts   []Cx   // permanent contexts, parents first
	Templates  []Cx   // volatile context table
}

// AddCx instantiates template Ix as context Path (SpmiDdsAddCx). Offset,
// when nonzero or with AddCxReplay, asks for the slot at that offset: the
// libraries replay their contexts after a daemon restart at the slots
// their callers write, and the daemon publishes such a slot as it is. Both
// are trailing fields, each sent only when needed (Offset when it or
// Flags is nonzero, Flags when nonzero), so a body without them decodes
// as before.
type AddCx struct {
	Ix     uint16
	Path   string
	Descr  string
	ASN    uint32
	Offset uint32
	Flags  uint32
}

// AddCx flags.
const (
	// AddCxReplay: the offset is requested even when it is 0 (a slot at 0
	// exists when the permanent part is empty).
	AddCxReplay = 1
	addCxFlags  = AddCxReplay
)

// Requested tells whether m asks for the slot at m.Offset.
func (m *AddCx) Requested() bool { return m.Offset != 0 || m.Flags&AddCxReplay != 0 }

// DelCx deletes the volatile context whose slot starts at Offset in the
// data area (SpmiDdsDelCx).
type DelCx struct{ Offset uint32 }

// Exit unregisters the supplier (SpmiExit).
type Exit struct{}

// Reply answers every request. Value is the registration number for Init
// and the slot offset in the data area for AddCx, 0 otherwise.
type Reply struct {
	To     MsgType // request type answered
	Errno  spmierr.Code
	Errmsg string
	Value  uint64
}

func (*Init) Type() MsgType    { return MsgInit }
func (*AddCx) Type() MsgType   { return MsgAddCx }
func (*DelCx) Type() MsgType   { return MsgDelCx }
func (*Exit) Type() MsgType    { return MsgExit }
func (r *Reply) Type() MsgType { return r.To.Request().ReplyTo() }

// NewReply answers request to with err's SPMI code and text (SiSuccess and
// no text for nil) and value.
func NewReply(to MsgType, value uint64, err error) *Reply {
	r := &Reply{To: to.Request(), Value: value, Errno: spmierr.CodeOf(err)}
	if err != nil {
		msg := err.Error()
		if se, ok := err.(*spmierr.Error); ok {
			msg = se.Msg
		}
		r.Errmsg = truncUTF8(msg, MaxErrmsg)
	}
	return r
}

// Err is the reply's error, nil for SiSuccess.
func (r *Reply) Err() error {
	if r.Errno == spmierr.SiSuccess {
		return nil
	}
	return &spmierr.Error{Code: r.Errno, Msg: r.Errmsg}
}

func truncUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xc0 == 0x80 { // don't cut a character in two
		n--
	}
	return s[:n]
}

// Smallest encodings, to refuse counts that cannot fit before allocating.
const (
	minStat = 2 + 2 + 8 + 8 + 1 + 1 + 1 + 4 + 4 + 4
	minCx   = 2 + 2 + 4 + 4 + 1 + 4
)

func (s *Stat) encode(e *enc) {
	e.str("name", s.Name, MaxName)
	e.str("description", s.Descr, MaxDescr)
	e.u64(uint64(s.Min))
	e.u64(uint64(s.Max))
	e.u8(uint8(s.ValType))
	e.u8(uint8(s.DataType))
	e.u8(uint8(s.Type))
	e.u32(s.ASN)
	e.u32(s.Size)
	e.u32(s.Offset)
}

func (c *Cx) encode(e *enc, lim Limits) {
	e.str("path", c.Path, MaxPath)
	e.str("description", c.Descr, MaxDescr)
	e.u32(c.ASN)
	e.u32(c.DataSize)
	e.u8(uint8(c.InstFreq))
	e.count("statistics", len(c.Stats), lim.MaxStats)
	at := len(e.at)
	for i := range c.Stats {
		e.at = append(e.at[:at], loc{"statistic", i})
		c.Stats[i].encode(e)
	}
	e.at = e.at[:at]
}

func encodeCxs(e *enc, what string, cxs []Cx, limit int, lim Limits) {
	e.count(what, len(cxs), limit)
	at := len(e.at)
	for i := range cxs {
		e.at = append(e.at[:at], loc{what, i})
		cxs[i].encode(e, lim)
	}
	e.at = e.at[:at]
}

func (m *Init) encode(e *enc, lim Limits) {
	v := m.Version
	if v == 0 {
		v = ProtoMajor
	}
	e.u16(v)
	e.u16(0)
	e.u32(m.AreaLen)
	e.u32(m.PermLen)
	e.u64(m.Generation)
	e.str("file", m.File, MaxFile)
	encodeCxs(e, "context", m.Contexts, lim.MaxContexts, lim)
	encodeCxs(e, "template", m.Templates, lim.MaxTemplates, lim)
	if n := m.numStats(); n > lim.MaxStatsTotal && e.err == nil {
		e.err = spmierr.Errorf(spmierr.SiBadArgument, "Init: %d statistics in all, at most %d allowed", n, lim.MaxStatsTotal)
	}
}

func (m *Init) numStats() int {
	n := 0
	for _, t := range [][]Cx{m.Contexts, m.Templates} {
		for i := range t {
			n += len(t[i].Stats)
		}
	}
	return n
}

func (m *AddCx) encode(e *enc, _ Limits) {
	e.u16(m.Ix)
	e.str("path", m.Path, MaxPath)
	e.str("description", m.Descr, MaxDescr)
	e.u32(m.ASN)
	if m.Offset != 0 || m.Flags != 0 {
		e.u32(m.Offset)
	}
	if m.Flags != 0 {
		e.u32(m.Flags)
	}
}

func (m *DelCx) encode(e *enc, _ Limits) { e.u32(m.Offset) }
func (*Exit) encode(*enc, Limits)        {}

func (r *Reply) encode(e *enc, _ Limits) {
	e.u32(uint32(int32(r.Errno)))
	e.u32(0)
	e.u64(r.Value)
	e.str("error message", r.Errmsg, MaxErrmsg)
}

func (d *dec) stat() (s Stat) {
	s.Name = d.str("name", MaxName)
	s.Descr = d.str("description", MaxDescr)
	s.Min = int64(d.u64("min"))
	s.Max = int64(d.u64("max"))
	s.ValType = ValType(d.u8("value_type"))
	s.DataType = DataType(d.u8("data_type"))
	s.Type = DataType(d.u8("type"))
	s.ASN = d.u32("asnno")
	s.Size = d.u32("size")
	s.Offset = d.u32("offset")
	return s
}

func (d *dec) cx(lim Limits, total *int) (c Cx) {
	c.Path = d.str("path", MaxPath)
	c.Descr = d.str("description", MaxDescr)
	c.ASN = d.u32("asnno")
	c.DataSize = d.u32("datasize")
	c.InstFreq = InstFreq(d.u8("inst_freq"))
	n := d.count("statistics", lim.MaxStats, minStat)
	if *total += n; *total > lim.MaxStatsTotal {
		d.fail("statistics", "%d in all so far, at most %d allowed per supplier", *total, lim.MaxStatsTotal)
		return c
	}
	if n > 0 {
		c.Stats = make([]Stat, n)
	}
	at := len(d.at)
	for i := 0; i < n && d.err == nil; i++ {
		d.at = append(d.at[:at], loc{"statistic", i})
		c.Stats[i] = d.stat()
	}
	d.at = d.at[:at]
	return c
}

func (d *dec) cxs(what string, limit int, lim Limits, total *int) []Cx {
	n := d.count(what+"s", limit, minCx)
	if n == 0 {
		return nil
	}
	out := make([]Cx, n)
	at := len(d.at)
	for i := 0; i < n && d.err == nil; i++ {
		d.at = append(d.at[:at], loc{what, i})
		out[i] = d.cx(lim, total)
	}
	d.at = d.at[:at]
	return out
}

func decodeInit(d *dec, lim Limits) (*Init, error) {
	m := &Init{Version: d.u16("version")}
	if d.err == nil && m.Version != ProtoMajor {
		// Checked before anything else: a newer client's Init may not parse.
		return nil, spmierr.Errorf(spmierr.SiInitFailed, "protocol version %d; this daemon speaks version %d", m.Version, ProtoMajor)
	}
	d.zero16("flags")
	m.AreaLen = d.u32("area length")
	m.PermLen = d.u32("permanent length")
	m.Generation = d.u64("generation")
	m.File = d.str("file", MaxFile)
	total := 0
	m.Contexts = d.cxs("context", lim.MaxContexts, lim, &total)
	m.Templates = d.cxs("template", lim.MaxTemplates, lim, &total)
	return m, nil
}

// Decode parses the body of a frame of type t. Errors are *spmierr.Error:
// SiBadArgument naming the field, or SiInitFailed for an unknown protocol
// version.
func Decode(t MsgType, body []byte, lim Limits) (Message, error) {
	lim = lim.norm()
	d := &dec{b: body, at: where{{t.String(), -1}}}
	var m Message
	switch t {
	case MsgInit:
		im, err := decodeInit(d, lim)
		if err != nil {
			return nil, err
		}
		m = im
	case MsgAddCx:
		a := &AddCx{Ix: d.u16("ix"), Path: d.str("path", MaxPath), Descr: d.str("description", MaxDescr), ASN: d.u32("asnno")}
		if d.err == nil && d.off < len(d.b) {
			a.Offset = d.u32("offset")
		}
		if d.err == nil && d.off < len(d.b) {
			if a.Flags = d.u32("flags"); a.Flags&^addCxFlags != 0 && d.err == nil {
				d.fail("flags", "unknown flags %#x", a.Flags&^addCxFlags)
			}
		}
		m = a
	case MsgDelCx:
		m = &DelCx{Offset: d.u32("offset")}
	case MsgExit:
		m = &Exit{}
	default:
		if !t.known() || !t.IsReply() {
			return nil, spmierr.Errorf(spmierr.SiBadArgument, "unknown message type %#x", uint16(t))
		}
		r := &Reply{To: t.Request()}
		r.Errno = spmierr.Code(int32(d.u32("errno")))
		if v := d.u32("reserved"); v != 0 && d.err == nil {
			d.fail("reserved", "must be 0, is %d", v)
		}
		r.Value = d.u64("value")
		r.Errmsg = d.str("error message", MaxErrmsg)
		m = r
	}
	d.end()
	if d.err != nil {
		return nil, d.err
	}
	return m, nil
}
