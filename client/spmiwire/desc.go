package spmiwire

import (
	"fmt"
	"unicode/utf8"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
)

func errorf(format string, args ...any) error {
	return spmierr.Errorf(spmierr.SiBadArgument, format, args...)
}

// Limits of names and descriptions, from the guide's SI_MAXNAME and
// SI_MAXLNAME (which include the terminating NUL).
const (
	MaxName  = 31
	MaxDescr = 63
)

// The guide's enums ValType (SiCounter, SiQuantity) and SiInstFreq
// (SiNoInst, SiCfgInst, SiContInst) are ddswire's: one definition for the
// DDS wire, the control socket and the daemon.

// DataType is the format of a statistic's value. SiLong and SiFloat are the
// guide's; SiText is this project's extension for names and states that a
// manager needs beside the numbers (served as DisplayString).
type DataType uint8

const (
	SiLong DataType = iota
	SiFloat
	SiText
)

func (d DataType) String() string {
	switch d {
	case SiLong:
		return "long"
	case SiFloat:
		return "float"
	}
	return "text"
}

// ValText is how people read a value type: "counter" or "quantity".
func ValText(v ddswire.ValType) string {
	if v == ddswire.SiCounter {
		return "counter"
	}
	return "quantity"
}

// InstText is how the control socket's peek entries (Entry.Inst) and
// people read an instantiability; ParseInst reads it back.
func InstText(f ddswire.InstFreq) string {
	switch f {
	case ddswire.SiNoInst:
		return "not instantiable"
	case ddswire.SiCfgInst:
		return "instantiable at configuration time"
	}
	return "continuously instantiable"
}

// ParseInst is the instantiability InstText wrote.
func ParseInst(s string) (ddswire.InstFreq, error) {
	for f := ddswire.SiNoInst; f <= ddswire.SiContInst; f++ {
		if InstText(f) == s {
			return f, nil
		}
	}
	return 0, fmt.Errorf("unknown instantiability %q", s)
}

// StatDesc describes a statistic, as the guide's SpmiStat does, plus what
// the SNMP side needs: the decimal scale of floats, units, and whether a
// quantity may exceed 32 bits. Its fields are ordered by size: blocks of
// suppliers' statistics hold a million of them.
type StatDesc struct {
	Name  string
	Descr string
	Units string
	Min   int64 // default low scale value (for counters: per second)
	Max   int64 // default high scale value
	ASN   uint32
	Val   ddswire.ValType
	Data  DataType
	// Scale is the number of decimal places a float keeps on the wire: the
	// served integer is the value times 10^Scale (the MIB's DISPLAY-HINT).
	Scale uint8
	// Wide marks quantities that can exceed 32 bits; they are served as a
	// 64-bit gauge (CounterBasedGauge64 on the Counter64 wire type).
	Wide bool
	// Form says what a long quantity's number stands for, where the SNMP
	// view serves it as a textual convention rather than the number
	// (SNMPValue); the SPMI view keeps the number.
	Form Form
}

// Form is what a long quantity's number stands for (StatDesc.Form).
type Form uint8

const (
	// FormNumber: the number itself.
	FormNumber Form = iota
	// FormBool: 0 false, any other value true; served as TruthValue
	// (SNMPv2-TC: true(1), false(2)).
	FormBool
	// FormTime: seconds since 1970 (UTC); served as DateAndTime
	// (SNMPv2-TC), 11 octets in UTC.
	FormTime
)

// CheckName checks the name and description of a statistic or a
// context (kind) against the guide's limits.
func CheckName(kind, name, descr string) error {
	switch {
	case name == "":
		return errorf("%s name is empty", kind)
	case len(name) > MaxName:
		return errorf("%s name %q is %d bytes, at most %d allowed", kind, name, len(name), MaxName)
	case !utf8.ValidString(name):
		return errorf("%s name %q is not valid UTF-8", kind, name)
	case len(descr) > MaxDescr:
		return errorf("%s %q: description is %d bytes, at most %d allowed", kind, name, len(descr), MaxDescr)
	}
	for _, r := range name {
		if r == '/' || r < ' ' {
			return errorf("%s name %q contains %q", kind, name, r)
		}
	}
	return nil
}

// Validate checks the description against the guide's limits.
func (d *StatDesc) Validate() error {
	if err := CheckName("statistic", d.Name, d.Descr); err != nil {
		return err
	}
	if d.Val > ddswire.SiQuantity {
		return errorf("statistic %q: value type %d is neither SiCounter nor SiQuantity", d.Name, d.Val)
	}
	if d.Data > SiText {
		return errorf("statistic %q: data type %d is not SiLong, SiFloat or SiText", d.Name, d.Data)
	}
	if d.Scale > 9 {
		return errorf("statistic %q: scale %d exceeds 9 decimal places", d.Name, d.Scale)
	}
	if d.Min > d.Max {
		return errorf("statistic %q: low scale %d above high scale %d", d.Name, d.Min, d.Max)
	}
	if d.Form > FormTime {
		return errorf("statistic %q: form %d unknown", d.Name, d.Form)
	}
	if d.Form != FormNumber && (d.Val != ddswire.SiQuantity || d.Data != SiLong || d.Scale != 0 || d.Wide) {
		return errorf("statistic %q: a boolean or a time is an unscaled long quantity", d.Name)
	}
	return nil
}

func (d *StatDesc) String() string { return fmt.Sprintf("%s (%s)", d.Name, d.Descr) }
