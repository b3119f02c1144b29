package mibtest

import (
	"fmt"
	"strings"
)

// FirstDiff names the first line where the modules a and b differ, as
// "line N: <aName> "...", <bName> "..."", or says they have the same lines.
func FirstDiff[T ~string | ~[]byte](a, b T, aName, bName string) string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range max(len(la), len(lb)) {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return fmt.Sprintf("line %d: %s %q, %s %q", i+1, aName, x, bName, y)
		}
	}
	return "same lines"
}
