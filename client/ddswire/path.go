package ddswire

import (
	"strings"
	"unicode/utf8"

	"github.com/perfagent/subagent/client/spmierr"
)

// Root is the first component of every supplier path (ASN 99).
const Root = "DDS"

func badArg(format string, args ...any) error {
	return spmierr.Errorf(spmierr.SiBadArgument, format, args...)
}

// CheckName checks a context or statistic short name: 1 to 31 bytes of
// UTF-8, no '/', no control characters, not "." or "..".
func CheckName(kind, name string) error {
	switch {
	case name == "":
		return badArg("%s name is empty", kind)
	case len(name) > MaxName:
		return badArg("%s name %q is %d bytes, at most %d allowed", kind, name, len(name), MaxName)
	case name == "." || name == "..":
		return badArg("%s name %q is reserved", kind, name)
	}
	return checkText(kind+" name", name, MaxName, "/")
}

// CheckDescr checks a description: up to 63 bytes of UTF-8 without
// control characters.
func CheckDescr(kind, descr string) error {
	return checkText(kind+" description", descr, MaxDescr, "")
}

func checkText(what, s string, max int, forbid string) error {
	if len(s) > max {
		return badArg("%s %q is %d bytes, at most %d allowed", what, s, len(s), max)
	}
	if !utf8.ValidString(s) {
		return badArg("%s %q is not valid UTF-8", what, s)
	}
	for _, r := range s {
		if r < ' ' || r == 0x7f || strings.ContainsRune(forbid, r) {
			return badArg("%s %q contains %q", what, s, r)
		}
	}
	return nil
}

// SplitPath checks a supplier context path, "DDS/<vendor>[/<name>...]" of
// at most 63 bytes, and returns its components.
func SplitPath(path string) ([]string, error) {
	if len(path) > MaxPath {
		return nil, badArg("context path %q is %d bytes, at most %d allowed", path, len(path), MaxPath)
	}
	parts := strings.Split(path, "/")
	if parts[0] != Root || len(parts) < 2 {
		return nil, badArg("context path %q is not under %s/<vendor>", path, Root)
	}
	for _, p := range parts[1:] {
		if err := CheckName("context", p); err != nil {
			return nil, badArg("context path %q: %v", path, err.(*spmierr.Error).Msg)
		}
	}
	return parts, nil
}

// parentOf is path without its last component.
func parentOf(path string) string { return path[:strings.LastIndexByte(path, '/')] }
