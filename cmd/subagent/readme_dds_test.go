package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
)

// readmeBlock returns the first ```sh block after heading in README.md.
func readmeBlock(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README.md has no heading %q", heading)
	}
	_, block, ok := strings.Cut(after, "```sh\n")
	if !ok {
		t.Fatalf("no ```sh block under %q", heading)
	}
	block, _, ok = strings.Cut(block, "```")
	if !ok {
		t.Fatalf("the block under %q does not end", heading)
	}
	return block
}

// sourceTree makes a directory that holds the repository's files through
// links but has its own bin/, so that the README's make and bin/ commands
// run as written without touching the working tree's bin/.
func sourceTree(t *testing.T) string {
	t.Helper()
	root, _ := filepath.Abs("../..")
	dir := t.TempDir()
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if n := e.Name(); n != "bin" && n != ".git" {
			if err := os.Symlink(filepath.Join(root, n), filepath.Join(dir, n)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// The README's DDS block, run as written by bash in a copy of the tree
// with a real daemon: it builds, both samples run side by side, get
// reads their values (the C float as 5, not its bit pattern), and its
// last line stops every process it started.
func TestReadmeDDSBlockRunsAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the daemon and the samples")
	}
	for _, tool := range []string{"bash", "make", "cc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: %v", tool, err)
		}
	}
	block := readmeBlock(t, "## Adding your own statistics: Dynamic Data Suppliers")
	dir, tmp := sourceTree(t), t.TempDir()

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-c", block)
	cmd.Dir = dir
	// The daemon's directories, a free port for its responder, and the
	// Go sample's file (os.TempDir) in the test's own places.
	cmd.Env = append(os.Environ(), "SUBAGENT_CONFIG=", "SUBAGENT_RUN_DIR="+filepath.Join(tmp, "run"),
		"SUBAGENT_STATE_DIR="+filepath.Join(tmp, "state"), "SUBAGENT_LISTEN=127.0.0.1:0", "TMPDIR="+tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out, errb testutil.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	defer syscall.Kill(-pgid, syscall.SIGKILL) // whatever the block left
	err := cmd.Wait()
	if err != nil {
		t.Fatalf("the block failed: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}

	got := map[string]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && strings.HasPrefix(f[0], "DDS/") {
			got[f[0]] = f[1]
		}
	}
	for path, want := range map[string]string{
		"DDS/IBM/Test/gadgets":               "22",
		"DDS/IBM/Moretest/SubTest/level":     "28",
		"DDS/IBM/Moretest/Bingo/problems":    "5", // a float declared SiFloat, not its bits (1084227584)
		"DDS/Sample/Moretest/Bingo/problems": "5",
	} {
		if got[path] != want {
			t.Errorf("%s = %q, want %s\nstdout:\n%s\nstderr:\n%s", path, got[path], want, out.String(), errb.String())
		}
	}
	if g := got["DDS/Sample/Test/gadgets"]; g == "" || g == "-" {
		t.Errorf("DDS/Sample/Test/gadgets: %q\n%s", g, out.String())
	}
	// The last line stopped the daemon and both samples: nothing of the
	// process group is left.
	testutil.Eventually(t, "every process of the block to exit", 10*time.Second, func() bool {
		return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
	})
}
