package control_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/internal/docexamples"
)

// docs/CONSUMERS.md's go.mod, program and build steps, as printed: the
// go.mod with this checkout's client module in its replace (the one
// change the doc asks for), main.go, then the shell block (go mod tidy,
// go build, the program) against a daemon. Nothing comes from the network
// (GOPROXY=off, GOSUMDB=off: go.sum takes the module cache's hashes): the
// client module is the checkout, and golang.org/x/sys is in the module
// cache (WarmModuleCache fetches it only when it is not).
func TestConsumersDocProgramAsPrinted(t *testing.T) {
	const heading = "## Go: package `consumer` of the client module"
	gomod := docexamples.Get(t, "docs/CONSUMERS.md", heading, 1)
	prog := docexamples.Get(t, "docs/CONSUMERS.md", heading, 2)
	steps := docexamples.Get(t, "docs/CONSUMERS.md", heading, 3)
	client, err := filepath.Abs("../client")
	if err != nil {
		t.Fatal(err)
	}
	const checkout = "=> /path/to/subagent/client"
	if !strings.Contains(gomod.Text, checkout) || prog.Lang != "go" || steps.Lang != "sh" {
		t.Fatalf("docs/CONSUMERS.md's blocks under %q are not a go.mod with %q, a Go program and shell steps", heading, checkout)
	}
	mod := t.TempDir()
	for name, text := range map[string]string{"go.mod": strings.Replace(gomod.Text, checkout, "=> "+client, 1), "main.go": prog.Text} {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	docexamples.WarmModuleCache(t)
	dir := runDir(t)
	serve(t, dir)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-c", steps.Text)
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "SUBAGENT_RUN_DIR="+dir, "GOFLAGS=", "GOWORK=off", "GOTOOLCHAIN=local", "GOPROXY=off", "GOSUMDB=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("docs/CONSUMERS.md:%d as printed: %v\n%s", steps.Line, err, out)
	}
	for _, want := range []string{"context CPU/cpu0/: ", "stat CPU/cpu0/idle = ", "stat Mem/Real/%free = ", "hot Disk/sda/busy = "} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the consumer's output lacks %q:\n%s", want, out)
		}
	}
	if b, err := os.ReadFile(filepath.Join(mod, "go.sum")); err != nil || !strings.Contains(string(b), "golang.org/x/sys ") {
		t.Errorf("go mod tidy wrote no go.sum with golang.org/x/sys: %v\n%s", err, b)
	}
}
