package docexamples

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// goBuild builds main.go in a module of its own made from gomod (its
// replace pointed at this checkout's client module, the one change the
// docs ask for) after `go mod tidy`, as the docs say; offline: the client
// module is the checkout and golang.org/x/sys is in the module cache
// (WarmModuleCache; GOPROXY=off; GOSUMDB=off, go.sum takes the cache's
// hashes).
func goBuild(t *testing.T, where, gomod, main string) {
	t.Helper()
	const checkout = "=> /src/subagent/client"
	if !strings.Contains(gomod, checkout) {
		t.Fatalf("%s: the go.mod has no %q", where, checkout)
	}
	dir := t.TempDir()
	client := filepath.Join(Root(), "client")
	for name, text := range map[string]string{"go.mod": strings.Replace(gomod, checkout, "=> "+client, 1), "main.go": main} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	WarmModuleCache(t)
	for _, args := range [][]string{{"mod", "tidy"}, {"build", "-o", filepath.Join(dir, "prog"), "."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off", "GOTOOLCHAIN=local", "GOPROXY=off", "GOSUMDB=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: go %s: %v\n%s\nmain.go:\n%s", where, strings.Join(args, " "), err, out, main)
		}
	}
}

// The Go programs of docs/CLIENT.md, docs/ARM.md and docs/DDS.md build in
// modules of their own, from their go.mod as printed. ARM.md's and DDS.md's
// are fragments of CLIENT.md's program: they build in a main function
// with the imports they use.
func TestDocGoProgramsBuild(t *testing.T) {
	blocks := For(t, "TestDocGoProgramsBuild")
	get := func(file string, lang string) []Block {
		var out []Block
		for _, b := range blocks {
			if b.File == file && b.Lang == lang {
				out = append(out, b)
			}
		}
		if len(out) != 1 {
			t.Fatalf("%s: %d %q blocks listed for this test, want 1", file, len(out), lang)
		}
		return out
	}
	imports := map[string][]string{
		"docs/ARM.md": {"github.com/perfagent/subagent/client/arm"},
		"docs/DDS.md": {"log", "time", "github.com/perfagent/subagent/client/ddsclient"},
	}
	for _, file := range []string{"docs/CLIENT.md", "docs/ARM.md", "docs/DDS.md"} {
		gomod, prog := get(file, "")[0], get(file, "go")[0]
		main := prog.Text
		if imp, fragment := imports[file]; fragment {
			main = "package main\n\nimport (\n\t\"" + strings.Join(imp, "\"\n\t\"") + "\"\n)\n\nfunc main() {\n" + prog.Text + "}\n"
		}
		t.Run(strings.TrimSuffix(filepath.Base(file), ".md"), func(t *testing.T) {
			goBuild(t, prog.File+":"+strconv.Itoa(prog.Line), gomod.Text, main)
		})
	}
}
