package daemon

import (
	"testing"

	"github.com/perfagent/subagent/internal/docexamples"
)

// The configuration snippets of the docs load as printed, as a file of
// their own on the shipped defaults, and pass the domain packages' checks.
func TestDocYAMLExamplesLoad(t *testing.T) {
	for _, b := range docexamples.For(t, "TestDocYAMLExamplesLoad") {
		if _, err := load(t, b.Text); err != nil {
			t.Errorf("%s:%d:\n%s\n%v", b.File, b.Line, b.Text, err)
		}
	}
}
