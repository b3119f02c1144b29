package libarm

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfagent/subagent/internal/cgraph"
)

// No two C files of libarm call each other, directly or around a circle:
// state.c is the bottom (the process's state, setup and clock), api.c and
// inst.c the top, so a change to one is read against the layers below it.
func TestCSourcesCallNoCircle(t *testing.T) {
	dir := built(t)
	objs := map[string]string{}
	for _, s := range sources() {
		name := strings.TrimSuffix(filepath.Base(s), ".c")
		objs[name] = filepath.Join(dir, name+".o")
	}
	g := cgraph.Read(t, objs)
	if len(g) < 5 {
		t.Fatalf("only %d objects use another: nm read nothing? %v", len(g), g)
	}
	cgraph.NoCircle(t, g)
	for from, tos := range g {
		if _, ok := tos["api"]; ok {
			t.Errorf("%s.c uses api.c (%v): api.c is the top", from, tos["api"])
		}
		if from == "state" {
			t.Errorf("state.c uses %v: it is the bottom", tos)
		}
	}
}
