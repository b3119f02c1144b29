package main

import (
	"strings"
	"testing"
)

// peek --depth N lists N levels below the path, from the daemon a page at
// a time and from the host directly; 0 is all of it.
func TestPeekDepth(t *testing.T) {
	e := newEnv(t)
	e.start()
	for _, where := range [][]string{nil, {"--local"}} {
		list := func(args ...string) []string {
			out, stderr, code := e.run(append(append(append([]string{"peek"}, args...), where...), e.args()...)...)
			if code != 0 {
				t.Fatalf("peek %v %v: exit %d: %s", args, where, code, stderr)
			}
			var paths []string
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				paths = append(paths, strings.Fields(l)[0])
			}
			return paths
		}
		one := list("--depth", "1", "CPU")
		if len(one) != 6 || one[0] != "CPU/" || one[1] != "CPU/total/" || one[2] != "CPU/cpu0/" {
			t.Errorf("%v peek --depth 1 CPU: %v, want CPU/, total and the four processors", where, one)
		}
		if all, two := list("CPU"), list("--depth", "2", "CPU"); len(all) <= len(one) || strings.Join(all, " ") != strings.Join(two, " ") {
			t.Errorf("%v peek CPU (%d lines) and --depth 2 (%d) differ", where, len(all), len(two))
		}
		if top := list("--depth", "1"); len(top) < 10 || strings.Count(strings.Join(top, " "), "/") != len(top) {
			t.Errorf("%v peek --depth 1: %v, want the top-level contexts only", where, top)
		}
	}
	if _, stderr, code := e.run(append([]string{"peek", "--depth", "-1"}, e.args()...)...); code == 0 || !strings.Contains(stderr, "--depth -1") {
		t.Errorf("peek --depth -1: exit %d, %s", code, stderr)
	}
}
