package spmi

import (
	"testing"

	"github.com/perfagent/subagent/asn1tree"
)

// A walk of the view goes through the collected part and the stable
// part in OID order, and serves live values as read when asked.
func TestWalkThroughParts(t *testing.T) {
	h := NewHierarchy(Config{Base: testBase})
	h.Add(wide100k{})
	live := newLive100k()
	h.Add(live)
	live.srcs[0].words[5] = 42
	s := h.Refresh()
	if s.NumStats != 200000 {
		t.Fatalf("%d statistics, want 200000", s.NumStats)
	}
	v := s.View()
	var prev asn1tree.OID
	n, dds := 0, 0
	for o, val, ok := v.Search(testBase, false, nil); ok; o, val, ok = v.Search(o, false, nil) {
		if prev != nil && asn1tree.Compare(prev, o) >= 0 {
			t.Fatalf("%s after %s", o, prev)
		}
		if val.Kind == asn1tree.NoValue || val.Kind > asn1tree.ObjectIdentifier {
			t.Fatalf("%s served as %s", o, val.Kind)
		}
		if o.HasPrefix(testBase.Append(99)) {
			dds++
		}
		prev = o
		n++
	}
	if dds != 100000 {
		t.Fatalf("walk saw %d live scalars, want 100000 (of %d entries)", dds, n)
	}
	if n != s.ViewLen() {
		t.Fatalf("walk saw %d entries, view holds %d", n, s.ViewLen())
	}
	got, ok := v.Get(testBase.Append(99, 1, 6, 0))
	if !ok || got.Num != 42 {
		t.Fatalf("live value %v %v, want 42", got, ok)
	}
	live.srcs[0].words[5] = 43
	if got, _ := s.View().Get(testBase.Append(99, 1, 6, 0)); got.Num != 43 {
		t.Fatalf("a new request read %v, want the value now (43)", got)
	}
	if got, _ := v.Get(testBase.Append(99, 1, 6, 0)); got.Num != 42 {
		t.Fatalf("the same request read %v, want its pinned 42", got)
	}
}
