package schema

import (
	"strconv"
	"strings"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

// Syntax is how one statistic is declared: its SYNTAX, the textual
// convention behind it when it is one of ours, and its UNITS.
type Syntax struct {
	Name  string    // as written after SYNTAX
	TC    *ScaledTC // set for ScaledGaugeN / ScaledIntegerN
	Units string    // UNITS clause ("" = none)
}

// ScaledTC is a textual convention for a scaled float: the base type and
// its number of decimal places, shown by DISPLAY-HINT "d-N".
type ScaledTC struct {
	Base  string // Gauge32 or Integer32
	Scale uint8
}

// Name is the convention's descriptor: ScaledGauge2, ScaledInteger1.
func (tc ScaledTC) Name() string {
	return "Scaled" + strings.TrimSuffix(tc.Base, "32") + strconv.Itoa(int(tc.Scale))
}

// SyntaxOf is how a statistic described by d is declared. It follows
// spmi's SNMPKind. Scaled Gauge32 and Integer32 statistics get a
// DISPLAY-HINT through a textual convention; Counter64 ones cannot (RFC
// 2579 section 3.1 forbids hints on Counter64, and CounterBasedGauge64 is
// already a convention), so their UNITS name the scaled unit instead
// ("0.01 seconds"). Booleans and times are SNMPv2-TC's TruthValue and
// DateAndTime, which need no UNITS.
func SyntaxOf(d *spmiwire.StatDesc) Syntax {
	switch d.Form {
	case spmiwire.FormBool:
		return Syntax{Name: "TruthValue"}
	case spmiwire.FormTime:
		return Syntax{Name: "DateAndTime"}
	}
	k := spmi.SNMPKind(d)
	s := Syntax{Units: d.Units}
	switch k {
	case asn1tree.OctetString:
		s.Name, s.Units = "DisplayString", ""
		return s
	case asn1tree.Counter64:
		s.Name = "Counter64"
		if d.Val == ddswire.SiQuantity {
			s.Name = "CounterBasedGauge64"
		}
		if d.Scale > 0 {
			// Without units the factor alone still says the scale.
			s.Units = strings.TrimSpace(scaleFactor(d.Scale) + " " + s.Units)
		}
		return s
	case asn1tree.Integer32:
		s.Name = "Integer32"
	default:
		s.Name = "Gauge32"
	}
	if d.Scale > 0 {
		tc := &ScaledTC{Base: s.Name, Scale: d.Scale}
		s.TC, s.Name = tc, tc.Name()
	}
	return s
}

// scaleFactor is 10^-scale written out: 2 -> "0.01".
func scaleFactor(scale uint8) string {
	if scale == 0 {
		return "1"
	}
	return "0." + strings.Repeat("0", int(scale)-1) + "1"
}

// StatSyntax is the SYNTAX a module declares for a statistic described by
// d (the directory serves it).
func StatSyntax(d *spmiwire.StatDesc) string { return SyntaxOf(d).Name }
