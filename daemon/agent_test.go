package daemon

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/perfagent/subagent/spmi"
)

// panicking is a provider of the CPU context with a parser bug.
type panicking struct{}

func (panicking) Name() string { return "CPU/parser" }
func (panicking) Collect(*spmi.Builder) error {
	var fields []string
	_ = fields[3] // a line shorter than the parser expects
	return nil
}

// A provider that panics is disabled and named in Agent/prov with the
// reason, while the rest serve, the other providers of its context too.
func TestPanickingProviderShownInAgentProv(t *testing.T) {
	d, err := New(fixtureConfig(t), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	d.h.Add(panicking{})
	d.h.Refresh()
	s := d.h.Refresh() // Agent reads what the previous refresh disabled
	if err := s.Failures["Agent"]; err != nil {
		t.Fatal(err)
	}
	why, err := s.Lookup("Agent/prov/CPU/disabled")
	if err != nil {
		t.Fatal(err)
	}
	if w := why.Value.TextValue(); !strings.HasPrefix(w, "CPU/parser: disabled after a panic: runtime error: index out of range") {
		t.Errorf("Agent/prov/CPU/disabled = %q, want the provider and its panic", w)
	}
	if n, err := s.Lookup("Agent/prov/Mem/disabled"); err != nil || n.Value.TextValue() != "" {
		t.Errorf("Agent/prov/Mem/disabled: %v %v, want empty", n, err)
	}
	for _, p := range []string{"CPU/cpu0/idle", "Mem/Real/size"} {
		if _, err := s.Lookup(p); err != nil {
			t.Errorf("%s not served: %v", p, err)
		}
	}
}
