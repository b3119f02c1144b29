package cgraph

import "testing"

// The check finds a circle where there is one (so a pass means none).
func TestCircleFinds(t *testing.T) {
	g := Graph{
		"a": {"b": {"f"}}, "b": {"c": {"g"}}, "c": {"a": {"h"}, "d": {"i"}},
	}
	if c := Circle(g); len(c) != 4 || c[0] != c[3] {
		t.Errorf("circle of a->b->c->a: got %v", c)
	}
	if w := Why(g, []string{"a", "b", "c"}); w != "a->b f; b->c g" {
		t.Errorf("why: %q", w)
	}
	delete(g["c"], "a")
	if c := Circle(g); c != nil {
		t.Errorf("no circle in a->b->c->d: got %v", c)
	}
}
