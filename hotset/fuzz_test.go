package hotset

import (
	"strings"
	"testing"
)

// ParsePath reads configuration text: it never panics, and what it
// accepts has a grandparent and a statistic without wildcards or slashes.
func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"Disk/*/busy", "RTime/ARM/*/respavg", "*/x", "Disk//*/busy", " /Proc/pid/*/usercpu/ ", "a/*/*/b", "\x00/*/\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		gp, st, err := ParsePath(p)
		if err != nil {
			return
		}
		if gp == "" || st == "" || strings.Contains(st, "/") || strings.Contains(gp+st, "*") || strings.Contains(gp, "//") {
			t.Fatalf("%q accepted as %q and %q", p, gp, st)
		}
	})
}
