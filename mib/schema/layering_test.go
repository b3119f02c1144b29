package schema_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const (
	generator = "github.com/perfagent/subagent/mib"
	self      = generator + "/schema"
)

// The daemon's packages take what they share with the module from this
// package, never from the generator: only the command (for `subagent
// mib`) links the generator in, and this package does not import it.
func TestOnlyTheCommandImportsTheGenerator(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the imports: %v", err)
	}
	cmd := exec.Command(goBin, "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "github.com/perfagent/subagent/...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := []string{"github.com/perfagent/subagent/cmd/subagent"}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		deps[f[0]] = f[1:]
		if slices.Contains(f[1:], generator) && !slices.Contains(allowed, f[0]) {
			t.Errorf("%s imports the generator %s", f[0], generator)
		}
	}
	for _, p := range []string{"daemon", "directory"} {
		if d, ok := deps["github.com/perfagent/subagent/"+p]; !ok || !slices.Contains(d, self) {
			t.Errorf("%s: not listed or does not import %s (%d packages listed)", p, self, len(deps))
		}
	}
	if !slices.Contains(deps["github.com/perfagent/subagent/cmd/subagent"], generator) {
		t.Errorf("the command does not import the generator: the list is wrong")
	}
}
