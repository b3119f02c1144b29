package ddswire

import (
	"bytes"
	"os"
	"strconv"
)

// ProcStart is a process's start time in clock ticks since boot (field 22
// of /proc/<pid>/stat), 0 if unknown, which skips the comparison. Header
// and daemon compare it so that a recycled pid cannot pass for the
// supplier that created a file. It is read by hand (see the package doc).
func ProcStart(pid int32) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(int(pid)) + "/stat")
	if err != nil {
		return 0
	}
	return statStart(b)
}

// statStart parses field 22 of a /proc/<pid>/stat line. The second field,
// the command name in parentheses, may hold spaces and parentheses itself,
// so fields are counted from its last ')': field 3 (state) follows it.
func statStart(b []byte) uint64 {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 22-2 {
		return 0
	}
	v, err := strconv.ParseUint(string(f[22-3]), 10, 64)
	if err != nil {
		return 0
	}
	return v
}
