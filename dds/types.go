package dds

import (
	"strings"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
)

// presented is the spmi format a statistic of data_type d is served in:
// the guide supports only SiLong and SiFloat, so floats and timevals are
// SiFloat and every integer type SiLong.
func presented(d ddswire.DataType) spmiwire.DataType {
	if d.PresentedFloat() {
		return spmiwire.SiFloat
	}
	return spmiwire.SiLong
}

func badArg(format string, args ...any) error {
	return spmierr.Errorf(spmierr.SiBadArgument, format, args...)
}

// parentOf is path without its last component.
func parentOf(path string) string { return path[:strings.LastIndexByte(path, '/')] }
