package dds

import (
	"strings"

	"github.com/perfagent/subagent/spmi"
)

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
