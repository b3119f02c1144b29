package spmi

import (
	"strings"
	"testing"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
)

// A provider that panics is disabled, with the reason, and its group is
// read again without it: what it added before it panicked is not served,
// its group's other providers and the other groups serve on, and it is
// not called again.
func TestPanickingProviderIsDisabled(t *testing.T) {
	badCx := CxDesc{Name: "Bad", Descr: "Providers of which one panics", ASN: 9}
	x := spmiwire.StatDesc{Name: "x", Descr: "Served", ASN: 1, Max: 10, Val: ddswire.SiQuantity}
	y := spmiwire.StatDesc{Name: "y", Descr: "Added before the panic", ASN: 2, Max: 10, Val: ddswire.SiQuantity}
	early := namedFunc{"Bad/early", func(b *Builder) error {
		c, err := b.Context(nil, &badCx)
		if err != nil {
			return err
		}
		return b.Stat(c, &x, spmiwire.Uint(1))
	}}
	panics := 0
	late := namedFunc{"Bad/late", func(b *Builder) error {
		panics++
		if err := b.Stat(b.Lookup("Bad"), &y, spmiwire.Uint(2)); err != nil {
			return err
		}
		_ = strings.Fields("short line")[3] // a parser bug
		return nil
	}}
	good := &countingProvider{}
	h := NewHierarchy(Config{Base: testBase})
	h.Add(early)
	h.Add(late)
	h.Add(good)
	for range 3 {
		s := h.Refresh()
		if _, err := s.Lookup("Bad/x"); err != nil {
			t.Errorf("Bad/x, of the provider beside the one that panicked: %v", err)
		}
		if _, err := s.Lookup("Bad/y"); err == nil {
			t.Error("Bad/y, added before the panic, is served")
		}
		if _, err := s.Lookup("CPU/idle"); err != nil {
			t.Errorf("CPU/idle, another group's: %v", err)
		}
		if err := s.Failures["Bad/late"]; err == nil || !strings.Contains(err.Error(), "panic") {
			t.Errorf("failures name the provider that panicked as %v", err)
		}
	}
	why := h.Disabled()["Bad/late"]
	if !strings.Contains(why, "disabled after a panic: runtime error: index out of range [3] with length 2") || strings.Contains(why, "\n") {
		t.Errorf("reason %q, want the panic's first line", why)
	}
	if len(h.Disabled()) != 1 {
		t.Errorf("disabled: %v, want only Bad/late", h.Disabled())
	}
	if panics != 1 || good.calls != 3 {
		t.Errorf("the provider that panicked was called %d times (want 1), the good one %d (want 3)", panics, good.calls)
	}
}
