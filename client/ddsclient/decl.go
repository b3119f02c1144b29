package ddsclient

import "github.com/perfagent/subagent/client/ddswire"

// Vendor is the root of a supplier's declarations: the vendor context
// DDS/<name>, whose ASN is the vendor's enterprise number.
type Vendor struct {
	parent
	descr     string
	asn       uint32
	contexts  []*Context
	templates []*Template
	handles   []permHandle
	nstats    uint32
	started   bool
}

type permHandle struct {
	c   *cell
	off uint32
}

// parent is what can hold subcontexts: the vendor and every context.
type parent struct {
	v    *Vendor
	path string
}

// Context is a permanent context. Declare its statistics with Counter,
// Gauge and Float before Start.
type Context struct {
	parent
	cx ddswire.Cx
}

// Template is a volatile context template (one entry of the guide's
// volatile table). Its path, description and ASN are placeholders; each
// AddCx gives its own.
type Template struct {
	ix uint16
	cx ddswire.Cx
}

// StatOption adjusts a statistic's declaration.
type StatOption func(*ddswire.Stat)

// Range sets the statistic's min and max (the guide's display range).
func Range(min, max int64) StatOption {
	return func(s *ddswire.Stat) { s.Min, s.Max = min, max }
}

// AsCounter marks the value as a counter (SiCounter): consumers show rates.
func AsCounter() StatOption { return func(s *ddswire.Stat) { s.ValType = ddswire.SiCounter } }

// AsQuantity marks the value as a level (SiQuantity).
func AsQuantity() StatOption { return func(s *ddswire.Stat) { s.ValType = ddswire.SiQuantity } }

// NewVendor starts the declarations of a supplier whose vendor context is
// DDS/<name>, with enterprise number asn.
func NewVendor(name, descr string, asn uint32) *Vendor {
	v := &Vendor{descr: descr, asn: asn}
	v.parent = parent{v: v, path: ddswire.Root + "/" + name}
	return v
}

// Context declares a permanent context name under p. Parents are always
// declared before their children, as the protocol requires.
func (p *parent) Context(name, descr string, asn uint32) *Context {
	c := &Context{parent: parent{v: p.v, path: p.path + "/" + name}}
	c.cx = ddswire.Cx{Path: c.path, Descr: descr, ASN: asn}
	p.v.contexts = append(p.v.contexts, c)
	return c
}

// Path is the context's full path, DDS/<vendor>/...
func (p *parent) Path() string { return p.path }

// Template declares a volatile context template. name only has to be a
// valid path component; instances get their own paths in AddCx.
func (v *Vendor) Template(name, descr string) *Template {
	t := &Template{ix: uint16(len(v.templates))}
	t.cx = ddswire.Cx{Path: v.path + "/" + name, Descr: descr, InstFreq: ddswire.SiContInst}
	v.templates = append(v.templates, t)
	return t
}

// Stat kinds: the field is always 8 bytes, 8-aligned.
func newStat(name, descr string, asn uint32, vt ddswire.ValType, src, pres ddswire.DataType, opts []StatOption) ddswire.Stat {
	s := ddswire.Stat{Name: name, Descr: descr, ASN: asn, ValType: vt, Type: src, DataType: pres, Size: 8}
	for _, o := range opts {
		o(&s)
	}
	return s
}

func (c *Context) add(s ddswire.Stat) *cell {
	s.Offset = 8 * c.v.nstats
	c.v.nstats++
	c.cx.Stats = append(c.cx.Stats, s)
	h := newCell()
	c.v.handles = append(c.v.handles, permHandle{h, s.Offset})
	return h
}

// Counter declares an unsigned 64-bit integer counter (SiCounter).
func (c *Context) Counter(name, descr string, asn uint32, opts ...StatOption) *Counter {
	return &Counter{c.add(newStat(name, descr, asn, ddswire.SiCounter, ddswire.SiULong, ddswire.SiLong, opts))}
}

// Gauge declares a signed 64-bit integer level (SiQuantity).
func (c *Context) Gauge(name, descr string, asn uint32, opts ...StatOption) *Gauge {
	return &Gauge{c.add(newStat(name, descr, asn, ddswire.SiQuantity, ddswire.SiLong, ddswire.SiLong, opts))}
}

// Float declares a float64 value, a level (SiQuantity) unless AsCounter.
func (c *Context) Float(name, descr string, asn uint32, opts ...StatOption) *Float {
	return &Float{c.add(newStat(name, descr, asn, ddswire.SiQuantity, ddswire.SiDouble, ddswire.SiDouble, opts))}
}

// Field is a statistic of a template; Instance.Counter and friends turn it
// into a handle on one instance.
type Field[H any] struct {
	t   *Template
	off uint32
}

func (t *Template) add(s ddswire.Stat) uint32 {
	s.Offset = 8 * uint32(len(t.cx.Stats))
	t.cx.Stats = append(t.cx.Stats, s)
	t.cx.DataSize = 8 * uint32(len(t.cx.Stats))
	return s.Offset
}

// Counter declares a counter field of every instance.
func (t *Template) Counter(name, descr string, asn uint32, opts ...StatOption) Field[Counter] {
	return Field[Counter]{t, t.add(newStat(name, descr, asn, ddswire.SiCounter, ddswire.SiULong, ddswire.SiLong, opts))}
}

// Gauge declares a signed level field of every instance.
func (t *Template) Gauge(name, descr string, asn uint32, opts ...StatOption) Field[Gauge] {
	return Field[Gauge]{t, t.add(newStat(name, descr, asn, ddswire.SiQuantity, ddswire.SiLong, ddswire.SiLong, opts))}
}

// Float declares a float64 field of every instance.
func (t *Template) Float(name, descr string, asn uint32, opts ...StatOption) Field[Float] {
	return Field[Float]{t, t.add(newStat(name, descr, asn, ddswire.SiQuantity, ddswire.SiDouble, ddswire.SiDouble, opts))}
}

// init builds the Init tables and the area geometry. areaSize is the
// caller's wish (0: room for 64 instances of the largest template).
func (v *Vendor) init(areaSize uint32) *ddswire.Init {
	m := &ddswire.Init{PermLen: 8 * v.nstats}
	m.Contexts = append(m.Contexts, ddswire.Cx{Path: v.path, Descr: v.descr, ASN: v.asn})
	for _, c := range v.contexts {
		m.Contexts = append(m.Contexts, c.cx)
	}
	var slot uint32
	for _, t := range v.templates {
		t.cx.DataSize = max(t.cx.DataSize, 8)
		m.Templates = append(m.Templates, t.cx)
		slot = max(slot, t.cx.DataSize)
	}
	if areaSize == 0 {
		areaSize = m.PermLen + 64*slot
	}
	m.AreaLen = max((areaSize+7)&^7, m.PermLen+slot, 8)
	return m
}
