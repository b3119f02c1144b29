package dds

import (
	"strings"

	"github.com/perfagent/subagent/spmi"
)

// The guide's enums are ddswire's, which knows nothing of spmi; these are
// their spmi equivalents.

// spmiValType is v's spmi equivalent.
func spmiValType(v ValType) spmi.ValType {
	if v == SiQuantity {
		return spmi.SiQuantity
	}
	return spmi.SiCounter
}

// spmiInst is f's spmi equivalent, by name: the two enums share no
// numbering by contract (types_test.go covers each value).
func spmiInst(f InstFreq) spmi.InstFreq {
	switch f {
	case SiCfgInst:
		return spmi.SiCfgInst
	case SiContInst:
		return spmi.SiContInst
	}
	return spmi.SiNoInst
}

// presented is the spmi format a statistic of data_type d is served in:
// the guide supports only SiLong and SiFloat, so floats and timevals are
// SiFloat and every integer type SiLong.
func presented(d DataType) spmi.DataType {
	if d.PresentedFloat() {
		return spmi.SiFloat
	}
	return spmi.SiLong
}

func badArg(format string, args ...any) error {
	return spmi.Errorf(spmi.SiBadArgument, format, args...)
}

// parentOf is path without its last component.
func parentOf(path string) string { return path[:strings.LastIndexByte(path, '/')] }
