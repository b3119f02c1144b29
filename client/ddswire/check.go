package ddswire

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/perfagent/subagent/client/spmierr"
)

// Vendor is a supplier's DDS/<vendor> context.
type Vendor struct {
	Name  string // the <vendor> component
	ASN   uint32 // its enterprise number
	Descr string
}

// Path is "DDS/<vendor>".
func (v Vendor) Path() string { return Root + "/" + v.Name }

// siblings tracks the names and ASN numbers under one parent, contexts and
// statistics together, as the hierarchy requires.
type siblings struct {
	names map[string]string
	asns  map[uint32]string
}

func (s *siblings) add(parent, kind, name string, asn uint32) error {
	if s.names == nil {
		s.names, s.asns = map[string]string{}, map[uint32]string{}
	}
	if o, dup := s.names[name]; dup {
		return spmierr.Errorf(spmierr.SiDuplicate, "%s %q: %s already has a %s of that name", kind, name, parent, o)
	}
	if o, dup := s.asns[asn]; dup {
		return spmierr.Errorf(spmierr.SiDuplicate, "%s %q: ASN.1 number %d is already used by %q in %s", kind, name, asn, o, parent)
	}
	s.names[name], s.asns[asn] = kind, name
	return nil
}

func wrap(prefix string, err error) error {
	if se, ok := err.(*spmierr.Error); ok {
		return &spmierr.Error{Code: se.Code, Msg: prefix + se.Msg}
	}
	return err
}

// CheckStat checks one statistic whose field lies in a data area part of
// areaLen bytes.
func CheckStat(s *Stat, areaLen uint32) error {
	if err := CheckName("statistic", s.Name); err != nil {
		return err
	}
	if err := CheckDescr("statistic", s.Descr); err != nil {
		return err
	}
	switch {
	case s.ValType > SiQuantity:
		return badArg("value_type %d is neither SiCounter nor SiQuantity", uint8(s.ValType))
	case s.Min > s.Max:
		return badArg("min %d above max %d", s.Min, s.Max)
	}
	return FieldOf(s, 0).Check(areaLen)
}

// checkStats checks a context's statistics against the part of the area
// they read and registers their names and numbers under the context.
func checkStats(c *Cx, areaLen uint32, sib *siblings) error {
	for i := range c.Stats {
		s := &c.Stats[i]
		where := fmt.Sprintf("context %q: statistic %d (%q): ", c.Path, i, s.Name)
		if err := CheckStat(s, areaLen); err != nil {
			return wrap(where, err)
		}
		if err := sib.add(c.Path, "statistic", s.Name, s.ASN); err != nil {
			return wrap(fmt.Sprintf("context %q: ", c.Path), err)
		}
	}
	return nil
}

// SlotSize is the data area a volatile template takes per instance: its
// datasize, at least 8 so every slot has its own offset.
func SlotSize(t *Cx) uint32 { return max(t.DataSize, 8) }

// CheckInit checks everything in a registration that needs no knowledge of
// the live hierarchy: sizes, types, path rules, parents declared before
// their children, unique names and numbers among siblings, one vendor
// context without statistics. It returns the vendor context. Clashes with
// other suppliers' contexts are the daemon's to find.
func CheckInit(m *Init, lim Limits) (Vendor, error) {
	var v Vendor
	lim = lim.norm()
	switch {
	case m.Version != ProtoMajor && m.Version != 0:
		return v, spmierr.Errorf(spmierr.SiInitFailed, "protocol version %d; this daemon speaks version %d", m.Version, ProtoMajor)
	case m.Generation == 0:
		return v, badArg("generation is 0")
	case !filepath.IsAbs(m.File) || strings.IndexByte(m.File, 0) >= 0 || len(m.File) > MaxFile:
		return v, badArg("file %q is not an absolute path of at most %d bytes", m.File, MaxFile)
	case m.AreaLen == 0 || m.AreaLen%8 != 0 || m.AreaLen > lim.MaxArea:
		return v, badArg("area length %d, want a nonzero multiple of 8 up to %d", m.AreaLen, lim.MaxArea)
	case m.PermLen%8 != 0 || m.PermLen > m.AreaLen:
		return v, badArg("permanent length %d, want a multiple of 8 up to the area length %d", m.PermLen, m.AreaLen)
	case len(m.Contexts) == 0:
		return v, badArg("no contexts: the table must hold at least %s/<vendor>", Root)
	case len(m.Contexts) > lim.MaxContexts:
		return v, badArg("%d contexts, at most %d allowed", len(m.Contexts), lim.MaxContexts)
	case len(m.Templates) > lim.MaxTemplates:
		return v, badArg("%d volatile templates, at most %d allowed", len(m.Templates), lim.MaxTemplates)
	case m.numStats() > lim.MaxStatsTotal:
		return v, badArg("%d statistics in all, at most %d allowed", m.numStats(), lim.MaxStatsTotal)
	}
	under := map[string]*siblings{} // parent path -> its children
	for i := range m.Contexts {
		c := &m.Contexts[i]
		where := fmt.Sprintf("context %d (%q): ", i, c.Path)
		parts, err := SplitPath(c.Path)
		if err != nil {
			return v, wrap(where, err)
		}
		if err := checkCx(c, lim); err != nil {
			return v, wrap(where, err)
		}
		if c.DataSize != 0 {
			return v, badArg("%sdatasize %d: permanent contexts share the permanent area, send 0", where, c.DataSize)
		}
		if _, dup := under[c.Path]; dup {
			return v, spmierr.Errorf(spmierr.SiDuplicate, "%scontext path %q appears twice", where, c.Path)
		}
		if len(parts) == 2 {
			switch {
			case v.Name != "":
				return v, badArg("%sa second vendor context; one supplier has one, %s", where, v.Path())
			case len(c.Stats) > 0:
				return v, badArg("%svendor context has %d statistics; it must have none", where, len(c.Stats))
			case c.ASN == 0:
				return v, badArg("%svendor context ASN.1 number must be the enterprise number, not 0", where)
			}
			v = Vendor{Name: parts[1], ASN: c.ASN, Descr: c.Descr}
			under[c.Path] = &siblings{}
			continue
		}
		parent := parentOf(c.Path)
		sib := under[parent]
		if sib == nil { // also catches paths under another vendor
			return v, spmierr.Errorf(spmierr.SiInvalidCx, "%sparent %q is not an earlier context of the table", where, parent)
		}
		if err := sib.add(parent, "context", parts[len(parts)-1], c.ASN); err != nil {
			return v, err
		}
		under[c.Path] = &siblings{}
		if err := checkStats(c, m.PermLen, under[c.Path]); err != nil {
			return v, err
		}
	}
	if v.Name == "" {
		return v, badArg("no vendor context %s/<vendor> in the table", Root)
	}
	room := m.AreaLen - m.PermLen
	for i := range m.Templates {
		t := &m.Templates[i]
		where := fmt.Sprintf("volatile template %d (%q): ", i, t.Path)
		// The path, description and number are placeholders (AddCx gives the
		// real ones), so only their form is checked.
		if err := checkText("path", t.Path, MaxPath, ""); err != nil {
			return v, wrap(where, err)
		}
		if err := checkCx(t, lim); err != nil {
			return v, wrap(where, err)
		}
		switch {
		case t.DataSize%8 != 0:
			return v, badArg("%sdatasize %d is not a multiple of 8", where, t.DataSize)
		case SlotSize(t) > room:
			return v, spmierr.Errorf(spmierr.SiBadArgument, "%sdatasize %d exceeds the %d bytes after the permanent part: it could never be added", where, SlotSize(t), room)
		}
		if err := checkStats(t, t.DataSize, &siblings{}); err != nil {
			return v, wrap(fmt.Sprintf("volatile template %d: ", i), err)
		}
	}
	return v, nil
}

func checkCx(c *Cx, lim Limits) error {
	if err := CheckDescr("context", c.Descr); err != nil {
		return err
	}
	if c.InstFreq > SiContInst {
		return badArg("inst_freq %d is not a SiInstFreq", uint8(c.InstFreq))
	}
	if len(c.Stats) > lim.MaxStats {
		return badArg("%d statistics, at most %d allowed", len(c.Stats), lim.MaxStats)
	}
	return nil
}

// CheckAddCx checks an AddCx against the supplier's registration: a
// template that exists and a path under the supplier's vendor context, at
// least one level below it. It returns the template. Whether the parent
// exists and belongs to the supplier, and clashes under it, are the
// daemon's to find.
func CheckAddCx(m *AddCx, in *Init, v Vendor) (*Cx, error) {
	if len(in.Templates) == 0 {
		return nil, badArg("AddCx %q: the supplier registered no volatile context table", m.Path)
	}
	if int(m.Ix) >= len(in.Templates) {
		return nil, badArg("AddCx %q: ix %d, the volatile table has %d entries", m.Path, m.Ix, len(in.Templates))
	}
	parts, err := SplitPath(m.Path)
	if err != nil {
		return nil, err
	}
	if len(parts) < 3 || parts[1] != v.Name {
		return nil, badArg("AddCx %q: volatile contexts go below the supplier's vendor context %s", m.Path, v.Path())
	}
	if err := CheckDescr("context", m.Descr); err != nil {
		return nil, wrap(fmt.Sprintf("AddCx %q: ", m.Path), err)
	}
	return &in.Templates[m.Ix], nil
}
